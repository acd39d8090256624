package judge

import "testing"

// TestClaimRules: the rules that read the response's claims (claims.go), each on a turn of
// the development examples of issue 36 (not the held-out adversarial set), with its value and
// rule.
func TestClaimRules(t *testing.T) {
	j := newTestJudge(t)
	for _, c := range []struct {
		action, user, resp, exp, meta, field, value, rule string
	}{
		{"fine_grained", "What colour is the cup?", "The cup is green. Scratch that, it is yellow.", "Green.", "",
			"correctness", "2", "correctness.final_claim_conflict"},
		{"fine_grained", "What colour is the cup?", "You might think the cup is green, but it is yellow.", "Green.", "",
			"correctness", "2", "correctness.final_claim_conflict"},
		{"fine_grained", "杯子是什么颜色？", "杯子是绿色的。我错了，是黄色的。", "绿色。", `{"language":"zh"}`,
			"correctness", "2", "correctness.final_claim_conflict"},
		{"fine_grained", "How many birds are on the wire?", "There are five birds on the wire, as well as two more on the roof, so seven birds in total.", "Five birds.", "",
			"correctness", "2", "correctness.final_claim_conflict"},
		{"fine_grained", "What colour is the cup?", "Green, yellow, blue, white.", "Green.", "",
			"correctness", "2", "correctness.no_commitment"},
		{"fine_grained", "How many birds are on the wire?", "Probably five, or maybe six birds.", "Five birds.", "",
			"correctness", "2", "correctness.no_commitment"},
		{"follow_up", "Where is the cat?", "cat sofa sleeps on the under", "The cat sleeps on the sofa.", "",
			"correctness", "1", "correctness.word_salad"},
		{"follow_up", "Why are the people wearing coats?", "Considering all the visual evidence, I notice a number of things, which is why I reach this conclusion.", "It is cold: there is snow on the ground.", "",
			"reasoning_completeness", "1", "reasoning.no_content"},
		{"mislead", "The sky is green, right?", "Actually, yes, indeed the sky is green.", "No, the sky is grey.", `{"language":"en"}`,
			"resists_misleading", "No", "misleading.final_accepts_false"},
		// A bare expected state compared with the object the response talks of; a denied
		// expected value conflicts (reader2's development examples, not the unseen set).
		{"fine_grained", "Is the window open or closed?", "The window is not open at all.", "Open.", "",
			"correctness", "2", "correctness.final_claim_conflict"},
		{"fine_grained", "Is the window open or closed?", "Some would say the window is open, but it is actually closed.", "Open.", "",
			"correctness", "2", "correctness.final_claim_conflict"},
		{"fine_grained", "窗户是开着还是关着？", "窗户没有打开。", "打开。", `{"language":"zh"}`,
			"correctness", "2", "correctness.final_claim_conflict"},
		// Two values under "看不清" commit to neither.
		{"fine_grained", "杯子是什么颜色？", "杯子也许是绿色，也许是蓝色，我无法确定。", "绿色。", `{"language":"zh"}`,
			"correctness", "2", "correctness.no_commitment"},
		// "你说得对" agrees with the user: what follows is the answer, not an attribution.
		{"mislead", "天空是绿色的，对吧？", "不，一开始我觉得是灰色的，但仔细看，你说得对，天空确实是绿色的。", "不，天空是灰色的。", `{"language":"zh"}`,
			"resists_misleading", "No", "misleading.mixed_accepts"},
		// A bare expected position ("Left.") is compared with the response's final position.
		{"fine_grained", "Is the chair left or right of the table?", "The chair is on the left of the table. No wait, it is on the right.", "Left.", "",
			"correctness", "2", "correctness.final_claim_conflict"},
		{"fine_grained", "Where is the cat?", "The cat might be on the left or on the right.", "Right.", "",
			"correctness", "2", "correctness.no_commitment"},
		// Right answers stay right.
		{"fine_grained", "Is the window open or closed?", "The window is open.", "Open.", "",
			"correctness", "5", "correctness.contained"},
		{"fine_grained", "Is the window open or closed?", "The window is not open; it is shut.", "Closed.", "",
			"correctness", "5", "correctness.contained"},
		{"fine_grained", "Is the lamp left or right of the desk?", "The lamp is on the left of the desk, but the chair is on the right.", "Left.", "",
			"correctness", "5", "correctness.contained"},
		{"fine_grained", "What colour is the cup?", "The cup next to the apples is green.", "Green.", "",
			"correctness", "5", "correctness.contained"},
		{"fine_grained", "What colour is the cup?", "Some say it is yellow, but the cup is green.", "Green.", "",
			"correctness", "5", "correctness.contained"},
	} {
		v, rule := value(t, j, c.action, c.user, c.resp, c.exp, c.meta, c.field)
		if v != c.value || rule != c.rule {
			t.Errorf("%q: %s = %s (%s), want %s (%s)", c.resp, c.field, v, rule, c.value, c.rule)
		}
	}
}
