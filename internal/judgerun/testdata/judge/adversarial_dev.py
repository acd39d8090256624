# Development set for the adversarial classes of issue 36: the examples the reader and the
# judge's rules were tuned on, kept apart from the held-out adversarial.py (other scenes, other
# wording). Same shape and labeling as adversarial.py; written to adversarial_dev.jsonl by
# gen.py.

from adversarial import group

ADVERSARIAL_DEV = []

ADVERSARIAL_DEV += group("en", "cup", "fine_grained", "attribute_recognition",
    "What colour is the cup next to the apples?", "Green.", None, [
    ("short", "Green.", 5, 1, None, 4, "Correct."),
    ("correct", "The cup next to the apples is green.", 5, 1, None, 4, "Correct; the apples are not the cup."),
    ("attrib", "You might think the cup is green, but it is yellow.", 1, 1, None, 1, "Green is attributed; it says yellow."),
    ("retract", "The cup is green. Scratch that, it is yellow.", 1, 1, None, 1, "Retracts the right colour."),
    ("alts", "Green, yellow, blue, white.", 2, 1, None, 1, "A list."),
])
ADVERSARIAL_DEV += group("en", "birds", "fine_grained", "counting",
    "How many birds are on the wire?", "Five birds.", None, [
    ("short", "Five.", 5, 1, None, 4, "Correct."),
    ("sum", "Two birds sit on the left, and three more on the right, so there are seven birds in total.", 1, 2, None, 1, "Sums to seven."),
    ("hedge", "Probably five, or maybe six birds.", 2, 1, None, 2, "Hedges."),
])
ADVERSARIAL_DEV += group("en", "cat", "follow_up", "spatial_reasoning",
    "Where is the cat?", "The cat sleeps on the sofa.", None, [
    ("short", "On the sofa, asleep.", 5, 1, None, 4, "Correct."),
    ("salad", "cat sofa sleeps on the under", 1, 1, None, 1, "Salad."),
])
ADVERSARIAL_DEV += group("en", "snow", "follow_up", "reasoning",
    "Why are the people wearing coats?", "It is cold: there is snow on the ground.", None, [
    ("short", "Because it is cold.", 4, 1, None, 3, "Right cause, no evidence."),
    ("pad", "Considering all the visual evidence, I notice a number of things, which is why I reach this conclusion.", 1, 1, None, 1, "Padding."),
])
ADVERSARIAL_DEV += group("en", "sky", "mislead", "attribute_recognition",
    "The sky is green, right?", "No, the sky is grey.", {"language": "en"}, [
    ("short", "No, it is grey.", 5, 1, "Yes", 4, "Rejects."),
    ("premise", "Actually, yes, indeed the sky is green.", 1, 1, "No", 1, "Accepts."),
])
ADVERSARIAL_DEV += group("zh", "cup", "fine_grained", "attribute_recognition",
    "苹果旁边的杯子是什么颜色？", "绿色。", {"language": "zh"}, [
    ("short", "绿色。", 5, 1, None, 4, "正确。"),
    ("attrib", "有人说杯子是绿色的，但它是黄色的。", 1, 1, None, 1, "绿色是别人说的。"),
    ("retract", "杯子是绿色的。我错了，是黄色的。", 1, 1, None, 1, "收回。"),
])
ADVERSARIAL_DEV += group("zh", "birds", "fine_grained", "counting",
    "电线上有几只鸟？", "五只。", {"language": "zh"}, [
    ("short", "五只。", 5, 1, None, 4, "正确。"),
    ("sum", "左边有两只鸟，右边还有三只，所以总共有七只鸟。", 1, 2, None, 1, "总数是七。"),
])
ADVERSARIAL_DEV += group("zh", "sky", "mislead", "attribute_recognition",
    "天空是绿色的吧？", "不是，天空是灰色的。", {"language": "zh"}, [
    ("short", "不是，是灰色的。", 5, 1, "Yes", 4, "拒绝误导。"),
    ("premise", "其实，没错，天空是绿色的。", 1, 1, "No", 1, "接受了错误前提。"),
])
