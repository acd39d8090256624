package ingest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// imagePlaceholder is the token LLaVA-style data put where an image goes in a message.
const imagePlaceholder = "<image>"

// sharegpt converts one ShareGPT/LLaVA conversation: {"id", "image" or "images",
// "conversations": [{"from": "human", "value": ...}, {"from": "gpt", "value": ...}]}.
// "<image>" placeholders are taken out of the text; their count per turn is kept in
// meta.source.image_placeholders. All the conversation's images go with every turn.
func (c *conv) sharegpt(line int, raw []byte) ([]Record, error) {
	var top map[string]json.RawMessage
	if err := c.decode(line, raw, &top); err != nil {
		return nil, err
	}
	var msgs []struct {
		From  string  `json:"from"`
		Role  string  `json:"role"`
		Value *string `json:"value"`
		Text  *string `json:"content"`
	}
	convRaw, ok := top["conversations"]
	if !ok {
		return nil, c.errorf(line, "conversations", "missing")
	}
	if err := json.Unmarshal(convRaw, &msgs); err != nil {
		return nil, c.errorf(line, "conversations", "not a list of {from, value}: %v", err)
	}
	var images []string
	for _, k := range []string{"image", "images"} {
		v, ok := top[k]
		if !ok || string(v) == "null" {
			continue
		}
		var one string
		var many []string
		switch {
		case json.Unmarshal(v, &one) == nil:
			many = []string{one}
		case json.Unmarshal(v, &many) == nil:
		default:
			return nil, c.errorf(line, k, "expected a path or a list of paths")
		}
		for i, ref := range many {
			p, err := c.image(line, fmt.Sprintf("%s[%d]", k, i), ref)
			if err != nil {
				return nil, err
			}
			images = append(images, p)
		}
	}
	model := ""
	if v, ok := top["model"]; ok {
		json.Unmarshal(v, &model)
	}
	episode := c.episodeID(line, top["id"], top["conversation_id"])
	conversation := rest(top, "conversations", "image", "images", "model")
	var (
		recs         []Record
		system, user []string
		answer       []string
		answered     bool
		open         bool
		placeholders int
	)
	flush := func() error {
		if !open {
			return nil
		}
		src := turnSource(conversation, nil, system)
		if placeholders > 0 {
			src["image_placeholders"] = placeholders
		}
		rec, err := c.turn(line, episode, len(recs)+1, strings.Join(user, "\n\n"), strings.Join(answer, "\n\n"), "", images, model, src)
		if err != nil {
			return err
		}
		recs = append(recs, rec)
		user, answer, answered, open, placeholders = nil, nil, false, false, 0
		return nil
	}
	for i, m := range msgs {
		field := fmt.Sprintf("conversations[%d]", i)
		role := m.From
		if role == "" {
			role = m.Role
		}
		text := m.Value
		if text == nil {
			text = m.Text
		}
		if text == nil {
			return nil, c.errorf(line, field+".value", "missing")
		}
		switch strings.ToLower(role) {
		case "system":
			system = append(system, *text)
		case "human", "user":
			if answered {
				if err := flush(); err != nil {
					return nil, err
				}
			}
			open = true
			placeholders += strings.Count(*text, imagePlaceholder)
			t := strings.TrimSpace(strings.ReplaceAll(*text, imagePlaceholder, ""))
			if t != "" {
				user = append(user, t)
			}
		case "gpt", "assistant", "model", "bot", "chatgpt", "bard":
			if !open {
				return nil, c.errorf(line, field+".from", "%q before any human message", role)
			}
			answered = true
			answer = append(answer, *text)
		default:
			return nil, c.errorf(line, field+".from", "%q: want human, gpt or system", role)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, c.errorf(line, "conversations", "no human message")
	}
	return recs, nil
}
