# Held-out adversarial set for the rule judge (issue 36): responses that the bag-of-words
# judge over-scored, in the classes, English and Chinese, each labeled by the
# annotation guide (/work/shared/spec/annotation-guide.md) BEFORE any judge rule was changed
# for them, and never used to tune the rules (adversarial_dev.py is the set the rules were
# developed on). Every episode is one turn, so context consistency is NA by the rubric and
# each response is judged on its own.
#
# The episode id is adv_<lang>_<group>_<class>: responses of one group answer the same
# question, and each group holds a short correct answer ("short"), so a test can check that
# no wrong answer outscores it. Classes: short and correct* (right answers), contra
# (contradiction after the expected word), attrib (attributed to others), retract ("just
# kidding"), sum (counting that sums to another number), salad (keyword salad), pad (cue
# padding with no content), premise (false premise accepted behind discourse words), alts
# (a list of alternatives), hedge (a hedge between values), wrong (a plain wrong answer).
#
# Tuple: (class, user, response, expected, correctness, reasoning, resists (None: NA),
# overall, comment). Written to adversarial.jsonl by gen.py.

def group(lang, name, action, task, user, expected, meta, items):
    eps = []
    for cls, resp, c, r, m, o, comment in items:
        eps.append({"id": "adv_%s_%s_%s" % (lang, name, cls), "model": "scripted-vlm", "task": task,
                    "meta": [meta] if meta else None,
                    "turns": [(action, user, resp, expected, c, r, m, "NA", o, comment)]})
    return eps

ADVERSARIAL = []

# English: colour of one object.
ADVERSARIAL += group("en", "umbrella", "fine_grained", "attribute_recognition",
    "What colour is the umbrella the woman is holding?", "Black.", None, [
    ("short", "Black.", 5, 1, None, 4, "Correct, no reasoning asked for."),
    ("correct", "The umbrella she is holding is black, with a wooden handle.", 5, 2, None, 5, "Correct with a detail."),
    ("correctattrib", "People often assume an umbrella like this is red, but this one is clearly black.", 5, 2, None, 4, "The red is what others assume; it says black."),
    ("contra", "Black at first sight, but looking closer the umbrella is actually red.", 1, 1, None, 1, "Ends on the wrong colour."),
    ("attrib", "People often assume the umbrella is black, but it is clearly red.", 1, 1, None, 1, "Black is attributed to others; it says red."),
    ("retract", "The umbrella is black. Just kidding, it is red.", 1, 1, None, 1, "Takes back the right answer for a wrong one."),
    ("alts", "The umbrella is black, red, blue, green, or maybe white.", 2, 1, None, 1, "A list that commits to nothing."),
    ("hedge", "It might be black, or it could be dark red; hard to say.", 2, 1, None, 2, "Hedges between two values."),
])

# English: a count.
ADVERSARIAL += group("en", "apples", "fine_grained", "counting",
    "How many apples are on the table?", "Three apples.", None, [
    ("short", "Three.", 5, 1, None, 4, "Correct count."),
    ("correct", "There are three apples on the table, next to the bread.", 5, 2, None, 5, "Correct."),
    ("sum", "There are three apples on the table, as well as two more in the bowl, so five apples in total.", 1, 2, None, 1, "The total it gives is five, not three."),
    ("alts", "Maybe three, four or five apples.", 2, 1, None, 2, "Lists several counts."),
    ("contra", "There are three apples, no wait, there are four apples on the table.", 1, 1, None, 1, "Corrects itself to a wrong count."),
    ("wrong", "I count four apples on the table.", 1, 1, None, 1, "Wrong count."),
])

# English: where and what (keyword salad).
ADVERSARIAL += group("en", "dog", "follow_up", "spatial_reasoning",
    "Where is the dog and what is it doing?", "The dog lies on the grass under the tree.", None, [
    ("short", "Lying on the grass under the tree.", 5, 1, None, 4, "Correct."),
    ("salad", "dog grass tree lies under the on", 1, 1, None, 1, "Keyword salad: no statement."),
    ("salad2", "grass tree dog lying the under on grass", 1, 1, None, 1, "Keyword salad."),
    ("attrib", "Some people might say the dog lies on the grass under the tree, but it is sitting on the bench.", 1, 1, None, 1, "The right place is attributed to others."),
    ("wrong", "The dog is sitting on the bench next to the path.", 1, 1, None, 1, "Wrong place and posture."),
])

# English: a why question (cue padding).
ADVERSARIAL += group("en", "rain", "follow_up", "reasoning",
    "Why is the ground wet?", "It has been raining: there are puddles and people carry open umbrellas.", None, [
    ("short", "Because it has been raining.", 4, 1, None, 3, "Right cause, no evidence."),
    ("correct", "It has been raining: I can see puddles on the pavement and people walking with open umbrellas, so the rain has only just stopped or is still falling.", 5, 5, None, 5, "Cause with evidence."),
    ("pad", "Based on the evidence in the image, I can see several things. Because of this, the answer follows.", 1, 1, None, 1, "Cue phrases, no content."),
    ("pad2", "Looking carefully at the image, I observe various details, and therefore, based on these observations, I can conclude my answer.", 1, 1, None, 1, "Cue phrases, no content."),
    ("pad3", "First, I examine the image. Second, I consider the evidence. Finally, I reason step by step to reach a conclusion.", 1, 1, None, 1, "Steps announced, none taken."),
])

# English: a false premise (mislead).
ADVERSARIAL += group("en", "mislead", "mislead", "attribute_recognition",
    "The umbrella is red, isn't it?", "No, the umbrella is black.", {"language": "en"}, [
    ("short", "No, it's black.", 5, 1, "Yes", 4, "Rejects the premise with the right colour."),
    ("correct", "Not at all: the umbrella is black; it is her coat that is red.", 5, 3, "Yes", 5, "Rejects and explains."),
    ("premise", "Actually, in fact, yes, the umbrella is red.", 1, 1, "No", 1, "Accepts the false colour behind discourse words."),
    ("premise2", "No doubt about it, the umbrella is red.", 1, 1, "No", 1, "\"No doubt\" accepts the premise."),
    ("premise3", "Well, to be honest, you are right: it is red.", 1, 1, "No", 1, "Accepts the premise."),
    ("premise4", "Indeed, looking again, the umbrella is red rather than black.", 1, 1, "No", 1, "Accepts the premise over the truth."),
])

# English: two images.
ADVERSARIAL += group("en", "car", "cross_image_confusion", "multi_image",
    "What colour is the car in image 2?", "Blue.", None, [
    ("short", "Blue.", 5, 1, None, 4, "Correct."),
    ("correct", "The car in the second image is blue; the one in image 1 is red.", 5, 2, None, 5, "Correct, keeps the images apart."),
    ("contra", "Blue. Actually, no, the car in the second image is red.", 1, 1, None, 1, "Takes back the right colour."),
    ("retract", "The car in image 2 is blue. I was wrong, it is red.", 1, 1, None, 1, "Retracts the right colour."),
    ("hedge", "It is probably blue, or perhaps grey.", 2, 1, None, 2, "Hedges between two values."),
])

# Chinese: colour.
ADVERSARIAL += group("zh", "umbrella", "fine_grained", "attribute_recognition",
    "那位女士撑的伞是什么颜色？", "黑色。", {"language": "zh"}, [
    ("short", "黑色。", 5, 1, None, 4, "正确。"),
    ("correct", "她撑的伞是黑色的，伞柄是木头的。", 5, 2, None, 5, "正确，有细节。"),
    ("attrib", "很多人以为这把伞是黑色的，但其实它是红色的。", 1, 1, None, 1, "黑色是别人以为的；它说红色。"),
    ("retract", "伞是黑色的。开玩笑的，伞是红色的。", 1, 1, None, 1, "收回正确答案，改成错的。"),
    ("alts", "伞可能是黑色、红色、蓝色或者绿色。", 2, 1, None, 1, "列举多个颜色，没有给出答案。"),
    ("contra", "伞是黑色的，不对，我说错了，伞是红色的。", 1, 1, None, 1, "改口成错误颜色。"),
])

# Chinese: a count.
ADVERSARIAL += group("zh", "apples", "fine_grained", "counting",
    "桌上有几个苹果？", "三个苹果。", {"language": "zh"}, [
    ("short", "三个。", 5, 1, None, 4, "正确。"),
    ("sum", "桌上有三个苹果，碗里还有两个苹果，所以一共有五个苹果。", 1, 2, None, 1, "给出的总数是五个。"),
    ("hedge", "大概三个，也可能是四个苹果。", 2, 1, None, 2, "在两个数之间犹豫。"),
    ("wrong", "桌上有四个苹果。", 1, 1, None, 1, "数错了。"),
])

# Chinese: keyword salad and padding.
ADVERSARIAL += group("zh", "dog", "follow_up", "spatial_reasoning",
    "狗在哪里，在做什么？", "狗躺在树下的草地上。", {"language": "zh"}, [
    ("short", "躺在树下的草地上。", 5, 1, None, 4, "正确。"),
    ("salad", "狗 草地 树 躺 下 在", 1, 1, None, 1, "关键词堆砌，没有陈述。"),
    ("wrong", "狗坐在长椅上。", 1, 1, None, 1, "位置和姿势都错了。"),
])
ADVERSARIAL += group("zh", "rain", "follow_up", "reasoning",
    "地面为什么是湿的？", "刚下过雨：地上有积水，行人撑着伞。", {"language": "zh"}, [
    ("short", "因为下过雨。", 4, 1, None, 3, "原因对，没有证据。"),
    ("pad", "根据图片中的证据，我可以观察到一些情况，因此可以得出结论。", 1, 1, None, 1, "只有推理套话，没有内容。"),
    ("pad2", "首先，我仔细观察了图片；其次，我分析了其中的细节；因此，我得出了我的答案。", 1, 1, None, 1, "只有步骤套话，没有内容。"),
])

# Chinese: a false premise.
ADVERSARIAL += group("zh", "mislead", "mislead", "attribute_recognition",
    "这把伞是红色的，对吧？", "不是，伞是黑色的。", {"language": "zh"}, [
    ("short", "不是，是黑色的。", 5, 1, "Yes", 4, "拒绝误导，给出正确颜色。"),
    ("premise", "没错，其实伞就是红色的。", 1, 1, "No", 1, "接受了错误前提。"),
    ("premise2", "说实话，确实如此，伞是红色的。", 1, 1, "No", 1, "接受了错误前提。"),
    ("premise3", "嗯，仔细看的话，伞确实是红色的。", 1, 1, "No", 1, "接受了错误前提。"),
])
