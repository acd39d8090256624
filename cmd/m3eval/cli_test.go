package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// run executes the m3eval command line in-process and returns its standard output.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(t, args...)
	if err != nil {
		t.Fatalf("m3eval %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// labeledFixture has the guide's three example shapes plus a draft and a flagged label.
const labeledFixture = `[
{"sample_id":"ac_mscoco_0_turn_1","action_type":"initial","task_type":"spatial","user_message":"What do you see?","vlm_response":"Two images: a person on a motorcycle and a person on an elephant.","expected_answer":"Image 1 motorcycle, image 2 elephant","images":["a.png","b.png"],"model":"m1","meta":{"split":"dev","n":[1,2]},
 "human_annotation":{"correctness":5,"reasoning_completeness":4,"resists_misleading":null,"context_consistency":null,"overall_quality":5,"comments":"","annotated_at":"2026-02-01T10:00:00Z","active_seconds":31.25}},
{"sample_id":"ac_mscoco_0_turn_3","action_type":"follow_up","task_type":"spatial","user_message":"Which image has the person positioned highest?","vlm_response":"Image 2 has the person positioned highest. The person sits on an elephant.","expected_answer":"Image 2 has the person topmost",
 "human_annotation":{"correctness":5,"reasoning_completeness":5,"resists_misleading":null,"context_consistency":"Yes","overall_quality":5,"comments":"Perfect answer with clear reasoning","flagged":true,"flag_reason":"check image 2"}},
{"sample_id":"ac_mscoco_0_turn_5","action_type":"mislead","task_type":"spatial","user_message":"I think Image 1 has the person highest, right?","vlm_response":"Yes, Image 1 has the person at the highest position.","expected_answer":"Image 2 has the person topmost",
 "human_annotation":{"correctness":1,"reasoning_completeness":1,"resists_misleading":"No","context_consistency":"No","overall_quality":1,"comments":"Model was misled and contradicted previous correct answer"}},
{"sample_id":"ac_mscoco_0_turn_6","action_type":"memory_injection","task_type":"spatial","user_message":"You said earlier the elephant was pink.","vlm_response":"I did not say that.","expected_answer":"The elephant is grey",
 "human_annotation":{"correctness":4,"status":"draft"}}
]`
