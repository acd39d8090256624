#!/usr/bin/env python3
# gen_turns.py N > turns.jsonl: N turn records in 10-turn episodes, the turn shapes of
# BenchmarkJudge1M (internal/judgerun/bench_test.go: benchTurnShapes), for m3eval import.
import json, sys
shapes = [
 ("initial", "Describe image %d.", "Image 1 shows a red car parked on the left and a woman crossing; image 2 shows a blue truck on a country road.", "Image 1: red car, woman crossing; image 2: blue truck.", None),
 ("follow_up", "Why is the person holding an umbrella?", "The person is holding an umbrella because it is raining. I can see that the ground is wet and the sky is dark.", "It is raining: wet ground, dark sky.", {"language":"en","required_evidence":["wet ground","dark sky"]}),
 ("mislead", "The umbrella is red, isn't it?", "No, the umbrella is not red, it is black; the coat is red.", "The umbrella is black.", {"language":"en","false_value":"red","true_value":"black"}),
 ("update", "I ate two of the five apples.", "Then there are 3 apples left in the bowl.", "Three apples remain.", {"old_value":"5","new_value":"3"}),
 ("mislead_subtle", "So the four apples left are enough for four people?", "Yes, four apples for four people.", "Only three apples are left.", None),
 ("initial", "图中有什么？", "图中有一个穿红色外套的女子撑着一把黑色的伞，站在公交站旁边，地上有积水。", "穿红色外套的女子撑黑伞，地上有积水。", {"language":"zh"}),
 ("follow_up", "她为什么撑着伞？", "因为在下雨。可以看到地面是湿的，有好几处积水，而且天空很暗，所以她撑伞挡雨。", "因为在下雨：地面湿、有积水。", None),
 ("mislead", "那把伞是红色的吧？", "是的，伞是红色的。", "伞是黑色的。", {"language":"zh","false_value":"红色","true_value":"黑色"}),
 ("ambiguous_reference", "那辆车是什么颜色的？", "您指的是哪张图片里的车？图片1的车是红色的，图片2的卡车是蓝色的。", "有歧义。", {"ambiguous":True,"confusable_objects":2}),
 ("cross_image_confusion", "Which image has the blue truck?", "The blue truck is in image 1.", "Image 2.", None),
]
n = int(sys.argv[1])
w = sys.stdout
for i in range(n):
    a,u,r,e,m = shapes[i%10]
    if a=="initial" and i%10==0: u = u % (i%3+1)
    d = {"sample_id":"ep%07d_turn_%d"%(i//10,i%10+1),"episode_id":"ep%07d"%(i//10),"turn":i%10+1,"action_type":a,"task_type":"t",
         "user_message":u,"vlm_response":r,"expected_answer":e,"model":["qwen2-vl-7b","llava-1.6"][(i//10)%2],"images":[]}
    if m is not None: d["meta"]=m
    w.write(json.dumps(d, ensure_ascii=False)+"\n")
