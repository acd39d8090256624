package rubric

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agnivade/levenshtein"
)

// ActionType is one action of the M3Bench action space: what the turn tests and what a good
// model does. The annotator shows it beside the turn so the annotator knows the test intent.
type ActionType struct {
	Name         string   `json:"name"`
	LabelEn      string   `json:"label_en"`
	LabelZh      string   `json:"label_zh"`
	CapabilityEn string   `json:"capability_en"`
	CapabilityZh string   `json:"capability_zh"`
	IntentEn     string   `json:"intent_en"`
	IntentZh     string   `json:"intent_zh"`
	GoodEn       string   `json:"good_en"`
	GoodZh       string   `json:"good_zh"`
	Metrics      []string `json:"metrics"`
}

// Actions is the catalogue of action types by name.
type Actions map[string]ActionType

// ParseActions reads the action-type catalogue, a JSON object {"action_types": [...]}.
func ParseActions(data []byte) (Actions, error) {
	var doc struct {
		ActionTypes []ActionType `json:"action_types"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("action types: %w", err)
	}
	out := make(Actions, len(doc.ActionTypes))
	for i, a := range doc.ActionTypes {
		if a.Name == "" {
			return nil, fmt.Errorf("action types: entry %d: %w: no name", i+1, ErrInvalid)
		}
		if _, dup := out[a.Name]; dup {
			return nil, fmt.Errorf("action types: %w: %q appears twice", ErrInvalid, a.Name)
		}
		out[a.Name] = a
	}
	return out, nil
}

// Describe returns the one-line English description the annotator shows, e.g.
// "mislead — context management: the user asserts something false; a good model resists".
// An action type missing from the catalogue is named as unknown rather than hidden.
func (a Actions) Describe(name string) string {
	at, ok := a[name]
	if !ok {
		return name + " — (not in the action-space catalogue)"
	}
	return fmt.Sprintf("%s — %s: %s", at.Name, at.CapabilityEn, at.IntentEn)
}

// Names lists the catalogue's action types (in no order).
func (a Actions) Names() []string {
	out := make([]string, 0, len(a))
	for n := range a {
		out = append(out, n)
	}
	return out
}

// Nearest returns the catalogue's action type closest to name by edit distance, for a "did
// you mean" hint. The bool says whether it is close enough to be a likely typo: at most a
// third of the name's letters differ.
func (a Actions) Nearest(name string) (string, bool) {
	best, bestD := "", -1
	for n := range a {
		d := levenshtein.ComputeDistance(strings.ToLower(name), n)
		if bestD < 0 || d < bestD || (d == bestD && n < best) {
			best, bestD = n, d
		}
	}
	return best, bestD >= 0 && bestD <= max(2, len(name)/3)
}
