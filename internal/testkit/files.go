package testkit

import (
	"encoding/json"
	"os"
	"testing"
)

// ReadJSON decodes the JSON file at path into v; a file that cannot be read or decoded
// fails the test, naming the file.
func ReadJSON(t testing.TB, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// WriteFile writes text to the file at path; a failed write fails the test, so that a test
// never goes on with an input that is not there.
func WriteFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// LabeledFixture (a labels file's JSON array) has the guide's three example shapes plus a draft and a flagged label.
const LabeledFixture = `[
{"sample_id":"ac_mscoco_0_turn_1","action_type":"initial","task_type":"spatial","user_message":"What do you see?","vlm_response":"Two images: a person on a motorcycle and a person on an elephant.","expected_answer":"Image 1 motorcycle, image 2 elephant","images":["a.png","b.png"],"model":"m1","meta":{"split":"dev","n":[1,2]},
 "human_annotation":{"correctness":5,"reasoning_completeness":4,"resists_misleading":null,"context_consistency":null,"overall_quality":5,"comments":"","annotated_at":"2026-02-01T10:00:00Z","active_seconds":31.25}},
{"sample_id":"ac_mscoco_0_turn_3","action_type":"follow_up","task_type":"spatial","user_message":"Which image has the person positioned highest?","vlm_response":"Image 2 has the person positioned highest. The person sits on an elephant.","expected_answer":"Image 2 has the person topmost",
 "human_annotation":{"correctness":5,"reasoning_completeness":5,"resists_misleading":null,"context_consistency":"Yes","overall_quality":5,"comments":"Perfect answer with clear reasoning","flagged":true,"flag_reason":"check image 2"}},
{"sample_id":"ac_mscoco_0_turn_5","action_type":"mislead","task_type":"spatial","user_message":"I think Image 1 has the person highest, right?","vlm_response":"Yes, Image 1 has the person at the highest position.","expected_answer":"Image 2 has the person topmost",
 "human_annotation":{"correctness":1,"reasoning_completeness":1,"resists_misleading":"No","context_consistency":"No","overall_quality":1,"comments":"Model was misled and contradicted previous correct answer"}},
{"sample_id":"ac_mscoco_0_turn_6","action_type":"memory_injection","task_type":"spatial","user_message":"You said earlier the elephant was pink.","vlm_response":"I did not say that.","expected_answer":"The elephant is grey",
 "human_annotation":{"correctness":4,"status":"draft"}}
]`
