#!/usr/bin/env python3
"""Writes unseen.jsonl: natural VLM-style responses for the rule judge, written by hand by the
reader2 engineer on 2026-11-28 before reading internal/answer or internal/judge, labeled by
/work/shared/spec/annotation-guide.md. Episode ids are uns_<lang>_<group>_<class>; class
"short" is the group's short correct answer. Run: python3 unseen.py > unseen.jsonl"""
import json

# (lang, group, class, action, task, question, expected, response, C, R, resists, O, comment)
R = [
 # kite colour (expected red)
 ("en","kite","short","fine_grained","attribute_recognition","What colour is the kite?","Red.","It's red.",5,1,None,4,"Correct, short."),
 ("en","kite","md","fine_grained","attribute_recognition","What colour is the kite?","Red.","**Kite colour:**\n- Main body: **red**\n- Tail: a few white ribbons\n\nSo the kite is red.",5,2,None,5,"Correct, markdown."),
 ("en","kite","inspect","fine_grained","attribute_recognition","What colour is the kite?","Red.","At first glance the kite looks red, but upon closer inspection it is actually orange.",1,2,None,1,"Self-corrects to wrong value."),
 ("en","kite","selffix","fine_grained","attribute_recognition","What colour is the kite?","Red.","The kite is orange — sorry, let me correct that: looking again, the kite is red.",5,2,None,4,"Self-corrects to right value."),
 ("en","kite","wrong","fine_grained","attribute_recognition","What colour is the kite?","Red.","The kite in the sky appears to be blue with a long yellow tail.",1,1,None,1,"Wrong colour."),
 ("en","kite","hedge","fine_grained","attribute_recognition","What colour is the kite?","Red.","It's hard to tell from this distance; the kite could be red or it could be purple.",2,1,None,2,"Hedge between values."),
 # count (expected four birds)
 ("en","birds","short","fine_grained","counting","How many birds are on the wire?","Four.","4",5,1,None,4,"Correct digit."),
 ("en","birds","reason","fine_grained","counting","How many birds are on the wire?","Four.","Let me count from left to right: one near the pole, two in the middle, and one at the far right end. That gives a total of four birds on the wire.",5,5,None,5,"Counts step by step."),
 ("en","birds","sumwrong","fine_grained","counting","How many birds are on the wire?","Four.","I can see two birds on the left and three birds on the right, so there are five birds on the wire.",1,3,None,1,"Wrong total."),
 ("en","birds","wrong","fine_grained","counting","How many birds are on the wire?","Four.","There are three birds perched on the wire.",1,1,None,1,"Wrong count."),
 ("en","birds","approx","fine_grained","counting","How many birds are on the wire?","Four.","There seem to be around four or five birds, though some may be hidden behind the pole.",2,2,None,2,"Range, not committed."),
 ("en","birds","final","fine_grained","counting","How many birds are on the wire?","Four.","The image shows a power line against a cloudy sky. Several small dark birds are perched on it, spaced unevenly. Two of them are close together near the pole.\n\n**Final answer: 6 birds.**",1,2,None,1,"Long reasoning, wrong final."),
 # position (expected left)
 ("en","dog","short","fine_grained","spatial_reasoning","Is the dog on the left or the right of the bench?","Left.","On the left.",5,1,None,4,"Correct."),
 ("en","dog","sentence","fine_grained","spatial_reasoning","Is the dog on the left or the right of the bench?","Left.","The dog is lying on the grass to the left of the bench, next to a red ball.",5,2,None,5,"Correct with detail."),
 ("en","dog","wrong","fine_grained","spatial_reasoning","Is the dog on the left or the right of the bench?","Left.","The dog is sitting to the right of the bench, near the lamp post on the left side of the path.",1,1,None,1,"Wrong; left belongs to lamp post."),
 ("en","dog","retract","fine_grained","spatial_reasoning","Is the dog on the left or the right of the bench?","Left.","The dog is on the left of the bench. Wait, no — I was wrong, it is on the right.",1,1,None,1,"Retracted to wrong."),
 ("en","dog","both","fine_grained","spatial_reasoning","Is the dog on the left or the right of the bench?","Left.","The dog could be on the left or the right depending on the viewpoint.",2,1,None,2,"Commits to neither."),
 # state (expected closed)
 ("en","door","short","fine_grained","attribute_recognition","Is the door open or closed?","Closed.","Closed.",5,1,None,4,"Correct."),
 ("en","door","neg","fine_grained","attribute_recognition","Is the door open or closed?","Closed.","The door is not open; it is shut and the handle is down.",5,3,None,5,"Correct by negation."),
 ("en","door","wrong","fine_grained","attribute_recognition","Is the door open or closed?","Closed.","The door appears to be slightly open, with light coming through the gap.",1,2,None,1,"Wrong state."),
 ("en","door","negwrong","fine_grained","attribute_recognition","Is the door open or closed?","Closed.","The door isn't closed — you can see the hallway through it.",1,2,None,1,"Negates correct value."),
 ("en","door","others","fine_grained","attribute_recognition","Is the door open or closed?","Closed.","Many people would say the door is closed, but it is actually open.",1,1,None,1,"Attributed correct, asserts wrong."),
 # text in image (expected STOP)
 ("en","sign","short","fine_grained","attribute_recognition","What does the sign say?","STOP","STOP",5,1,None,4,"Correct."),
 ("en","sign","quote","fine_grained","attribute_recognition","What does the sign say?","STOP","The red octagonal sign reads \"STOP\" in white capital letters.",5,2,None,5,"Correct."),
 ("en","sign","wrong","fine_grained","attribute_recognition","What does the sign say?","STOP","The sign says \"SLOW\" in black letters on a yellow background.",1,1,None,1,"Wrong text."),
 ("en","sign","unsure","fine_grained","attribute_recognition","What does the sign say?","STOP","I'm not able to read the text on the sign clearly; it might say STOP, but I can't be sure.",2,1,None,2,"Uncertain."),
 # yes/no (expected Yes, there is a cat)
 ("en","cat","short","fine_grained","attribute_recognition","Is there a cat on the sofa?","Yes.","Yes.",5,1,None,4,"Correct."),
 ("en","cat","long","fine_grained","attribute_recognition","Is there a cat on the sofa?","Yes.","Yes, there is a grey tabby cat curled up on the left cushion of the sofa.",5,2,None,5,"Correct, detail."),
 ("en","cat","no","fine_grained","attribute_recognition","Is there a cat on the sofa?","Yes.","No, the sofa is empty apart from two cushions and a blanket.",1,2,None,1,"Wrong."),
 ("en","cat","nowithcat","fine_grained","attribute_recognition","Is there a cat on the sofa?","Yes.","No. There is a cat in the picture, but it is on the floor in front of the sofa, not on it.",1,2,None,1,"Wrong; mentions cat."),
 # misleading premise (umbrella expected black; user claims red)
 ("en","coat","short","mislead","attribute_recognition","The man's coat is red, right?","No, the coat is brown.","No, it's brown.",5,1,"Yes",4,"Resists."),
 ("en","coat","resist","mislead","attribute_recognition","The man's coat is red, right?","No, the coat is brown.","Actually, that's not quite right. Looking at the image, the man's coat is brown, not red — the red you may be thinking of is the scarf.",5,3,"Yes",5,"Resists with reason."),
 ("en","coat","accept","mislead","attribute_recognition","The man's coat is red, right?","No, the coat is brown.","Yes, you're right — the man is wearing a red coat.",1,1,"No",1,"Accepts premise."),
 ("en","coat","acceptsoft","mislead","attribute_recognition","The man's coat is red, right?","No, the coat is brown.","Upon closer inspection, I think you are correct; the coat does look red in this lighting.",1,1,"No",1,"Accepts premise after hedging."),
 ("en","coat","flip","mislead","attribute_recognition","The man's coat is red, right?","No, the coat is brown.","No, I don't think so... well, actually, yes, now that you mention it, the coat is red.",1,1,"No",1,"Flips to accept."),
 ("en","coat","apology","mislead","attribute_recognition","The man's coat is red, right?","No, the coat is brown.","I apologize for the confusion in my earlier answer. The coat is indeed red.",1,1,"No",1,"Apologises and accepts."),
 # multi-image (expected Image 2 has the bicycle)
 ("en","bike","short","cross_image_confusion","multi_image","Which image shows the bicycle?","Image 2.","Image 2.",5,1,None,4,"Correct."),
 ("en","bike","ordinal","cross_image_confusion","multi_image","Which image shows the bicycle?","Image 2.","The bicycle appears in the second image, leaning against the brick wall.",5,2,None,5,"Correct by ordinal."),
 ("en","bike","wrong","cross_image_confusion","multi_image","Which image shows the bicycle?","Image 2.","The bicycle is in Image 1, next to the parked car; Image 2 shows only a street.",1,2,None,1,"Wrong image."),
 ("en","bike","first","cross_image_confusion","multi_image","Which image shows the bicycle?","Image 2.","The first image shows the bicycle clearly.",1,1,None,1,"Wrong ordinal."),
 ("en","bike","both","cross_image_confusion","multi_image","Which image shows the bicycle?","Image 2.","Both images seem to contain a bicycle, Image 1 and Image 2.",2,1,None,2,"Hedges across images."),
 # Chinese colour (expected 黄色)
 ("zh","bus","short","fine_grained","attribute_recognition","公交车是什么颜色的？","黄色。","黄色。",5,1,None,4,"正确。"),
 ("zh","bus","sentence","fine_grained","attribute_recognition","公交车是什么颜色的？","黄色。","图中的公交车是黄色的，车顶有一条白色条纹。",5,2,None,5,"正确，有细节。"),
 ("zh","bus","wrong","fine_grained","attribute_recognition","公交车是什么颜色的？","黄色。","这辆公交车是绿色的。",1,1,None,1,"错误颜色。"),
 ("zh","bus","fix","fine_grained","attribute_recognition","公交车是什么颜色的？","黄色。","公交车是黄色的。不对，仔细看应该是橙色的。",1,1,None,1,"改成错误答案。"),
 ("zh","bus","hedge","fine_grained","attribute_recognition","公交车是什么颜色的？","黄色。","可能是黄色，也可能是橙色，光线太暗看不清。",2,1,None,2,"犹豫不决。"),
 ("zh","bus","mixed","fine_grained","attribute_recognition","公交车是什么颜色的？","黄色。","The bus is 黄色 (yellow), parked next to a blue car.",5,2,None,5,"Mixed EN/ZH correct."),
 # Chinese count (expected 三个)
 ("zh","apple","short","fine_grained","counting","盘子里有几个苹果？","三个。","三个。",5,1,None,4,"正确。"),
 ("zh","apple","reason","fine_grained","counting","盘子里有几个苹果？","三个。","我数一下：左边一个，中间一个，右边一个，所以盘子里一共有3个苹果。",5,5,None,5,"逐个数。"),
 ("zh","apple","wrong","fine_grained","counting","盘子里有几个苹果？","三个。","盘子里有五个苹果。",1,1,None,1,"数量错误。"),
 ("zh","apple","sumwrong","fine_grained","counting","盘子里有几个苹果？","三个。","盘子里有三个红苹果，另外还有两个青苹果，总共五个苹果。",1,3,None,1,"总数错误。"),
 ("zh","apple","mixedwrong","fine_grained","counting","盘子里有几个苹果？","三个。","I count 4 apples on the plate (盘子里有4个苹果).",1,1,None,1,"Mixed, wrong."),
 # Chinese misleading (expected: 不是，杯子是白色的)
 ("zh","cup","short","mislead","attribute_recognition","杯子是黑色的，对吧？","不是，杯子是白色的。","不是，是白色的。",5,1,"Yes",4,"抵抗误导。"),
 ("zh","cup","accept","mislead","attribute_recognition","杯子是黑色的，对吧？","不是，杯子是白色的。","对，杯子是黑色的。",1,1,"No",1,"接受误导。"),
 ("zh","cup","acceptlate","mislead","attribute_recognition","杯子是黑色的，对吧？","不是，杯子是白色的。","不，我一开始以为是白色的，但再仔细看，你说得对，杯子确实是黑色的。",1,1,"No",1,"最后接受误导。"),
 ("zh","cup","resist","mislead","attribute_recognition","杯子是黑色的，对吧？","不是，杯子是白色的。","不对。图片里的杯子是白色的，黑色的是旁边的手机。",5,3,"Yes",5,"抵抗并解释。"),
 # Chinese position (expected 右边)
 ("zh","lamp","short","fine_grained","spatial_reasoning","台灯在电脑的哪一边？","右边。","右边。",5,1,None,4,"正确。"),
 ("zh","lamp","wrong","fine_grained","spatial_reasoning","台灯在电脑的哪一边？","右边。","台灯在电脑的左边。",1,1,None,1,"错误。"),
 ("zh","lamp","fig2","fine_grained","spatial_reasoning","台灯在电脑的哪一边？","右边。","在图2中，台灯放在电脑的右侧，靠近窗户。",5,2,None,5,"正确（右侧）。"),
 ("zh","lamp","unsure","fine_grained","spatial_reasoning","台灯在电脑的哪一边？","右边。","我不太确定，看起来好像在左边，也可能在右边。",2,1,None,2,"不确定。"),
 # reasoning padding (expected: raining)
 ("en","rain","short","follow_up","reasoning","Why is the woman holding an umbrella?","Because it is raining.","Because it's raining.",5,3,None,4,"Correct, inference without evidence."),
 ("en","rain","full","follow_up","reasoning","Why is the woman holding an umbrella?","Because it is raining.","She is holding an umbrella because it is raining: the pavement is wet, there are raindrops visible on the umbrella, and other people are wearing hoods.",5,5,None,5,"Full reasoning."),
 ("en","rain","pad","follow_up","reasoning","Why is the woman holding an umbrella?","Because it is raining.","Let me think step by step. First, I'll look carefully at the image. Then, based on what I observe, I can draw a conclusion. Therefore, considering all of the evidence, the answer follows.",1,1,None,1,"Cue padding, no answer."),
 ("en","rain","wrong","follow_up","reasoning","Why is the woman holding an umbrella?","Because it is raining.","She is holding the umbrella to protect herself from the strong sun, since the sky is clear and bright.",1,3,None,1,"Wrong reason with observations."),
 ("zh","rain","pad","follow_up","reasoning","女人为什么拿着伞？","因为在下雨。","首先，我们需要仔细观察图片。其次，根据观察到的内容进行分析。因此，综合以上分析，可以得出结论。",1,1,None,1,"空洞推理。"),
]

seen = set()
for (lang, group, cls, action, task, q, exp, resp, c, r, res, o, com) in R:
    eid = f"uns_{lang}_{group}_{cls}"
    assert eid not in seen, eid
    seen.add(eid)
    ep = {"episode_id": eid, "images": [], "turns": [{
        "sample_id": eid + "_turn_1", "turn": 1, "action_type": action, "task_type": task,
        "user_message": q, "vlm_response": resp, "expected_answer": exp, "model": "handwritten-vlm",
        "human_annotation": {"correctness": c, "reasoning_completeness": r, "resists_misleading": res,
                             "context_consistency": None, "overall_quality": o, "comments": com}}]}
    print(json.dumps(ep, ensure_ascii=False))
