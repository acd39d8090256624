package tui

import (
	"testing"

	"github.com/m3bench/m3eval/internal/rubric"
)

// TestKeysOfAnyRubric: a one-field 1–5 rubric has score keys and no choice keys, and its
// help line shows no empty choice entry; a choice-only rubric the other way round.
func TestKeysOfAnyRubric(t *testing.T) {
	score, err := rubric.Parse([]byte(`{"name":"one","fields":[{"name":"q","kind":"scale","min":1,"max":5,"required":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	km := newKeyMap(score)
	if !km.Score.Enabled() || km.Choice.Enabled() {
		t.Errorf("scale only: score %v, choice %v", km.Score.Enabled(), km.Choice.Enabled())
	}
	pref, err := rubric.Parse([]byte(`{"name":"pair","fields":[{"name":"p","kind":"choice","required":true,"choices":[{"value":"A","key":"a"},{"value":"B","key":"b"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	km = newKeyMap(pref)
	if km.Score.Enabled() || !km.Choice.Enabled() || km.Choice.Help().Key != "a/b" {
		t.Errorf("choice only: score %v, choice %v %q", km.Score.Enabled(), km.Choice.Enabled(), km.Choice.Help().Key)
	}
}
