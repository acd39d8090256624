package rubric

import (
	"encoding/json"
	"fmt"
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

// ParseActions reads the action-type catalogue ({"action_types": [...]}).
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
