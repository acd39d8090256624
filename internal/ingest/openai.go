package ingest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// chatMessage is one message of a chat-completions request or response.
type chatMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	ToolCalls json.RawMessage `json:"tool_calls"`
}

// contentPart is one part of a message's content list.
type contentPart struct {
	Type     string          `json:"type"`
	Text     *string         `json:"text"`
	ImageURL json.RawMessage `json:"image_url"` // {"url": ...} or, in the Responses API, a string
	Image    json.RawMessage `json:"image"`
}

// openai converts one chat log: {"messages": [...], "model": ..., ...}, a batch request
// line {"custom_id": ..., "body": {"model", "messages"}, "response": {...}}, or a
// {"request": {...}, "response": {...}} pair. Each user message (with the user messages
// right after it) and the assistant messages that answer it make one turn; a response's
// first choice answers the last user message. A turn's images are all the images the
// conversation has shown so far, as the model saw them.
func (c *conv) openai(line int, raw []byte) ([]Record, error) {
	var top map[string]json.RawMessage
	if err := c.decode(line, raw, &top); err != nil {
		return nil, err
	}
	body, prefix := top, ""
	for _, k := range []string{"body", "request"} {
		if inner, ok := top[k]; ok && top["messages"] == nil {
			if err := c.decode(line, inner, &body); err != nil {
				return nil, c.errorf(line, k, "not a JSON object")
			}
			prefix = k + "."
			break
		}
	}
	msgsRaw, ok := body["messages"]
	if !ok {
		return nil, c.errorf(line, prefix+"messages", "missing")
	}
	var msgs []chatMessage
	if err := fastUnmarshal(msgsRaw, &msgs); err != nil {
		return nil, c.errorf(line, prefix+"messages", "not a list of messages: %v", err)
	}
	// The answer of a logged response, if any.
	for _, k := range []string{"response", "choices"} {
		r, ok := top[k]
		if !ok {
			continue
		}
		m, field, err := c.responseMessage(line, k, r)
		if err != nil {
			return nil, err
		}
		if m != nil {
			msgs = append(msgs, *m)
			_ = field
		}
		break
	}
	model := ""
	for _, src := range []map[string]json.RawMessage{top, body} {
		if raw, ok := src["model"]; ok {
			if json.Unmarshal(raw, &model) == nil && model != "" {
				break
			}
		}
	}
	if model == "" {
		if r, ok := top["response"]; ok {
			var resp struct {
				Model string `json:"model"`
				Body  struct {
					Model string `json:"model"`
				} `json:"body"`
			}
			if json.Unmarshal(r, &resp) == nil {
				model = resp.Model
				if model == "" {
					model = resp.Body.Model
				}
			}
		}
	}
	episode := c.episodeID(line, top["id"], top["custom_id"], top["conversation_id"], metaID(top["metadata"]), metaID(body["metadata"]))
	conversation := rest(top, "messages", "model", "body", "request", "response", "choices")
	if prefix != "" {
		for k, v := range rest(body, "messages", "model") {
			conversation[strings.TrimSuffix(prefix, ".")+"."+k] = v
		}
	}

	var (
		recs     []Record
		images   []string
		system   []string
		user     []string
		answer   []string
		extra    map[string]any
		answered bool
		open     bool
	)
	flush := func() error {
		if !open {
			return nil
		}
		src := turnSource(conversation, extra, system)
		n := len(recs) + 1
		rec, err := c.turn(line, episode, n, strings.Join(user, "\n\n"), strings.Join(answer, "\n\n"), "",
			append([]string(nil), images...), model, src)
		if err != nil {
			return err
		}
		recs = append(recs, rec)
		user, answer, extra, answered, open = nil, nil, nil, false, false
		return nil
	}
	for i, m := range msgs {
		field := fmt.Sprintf("%smessages[%d]", prefix, i)
		text, imgs, err := c.content(line, field+".content", m.Content)
		if err != nil {
			return nil, err
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "user":
			if answered {
				if err := flush(); err != nil {
					return nil, err
				}
			}
			open = true
			if text != "" {
				user = append(user, text)
			}
			images = append(images, imgs...)
		case "assistant":
			if !open {
				// An assistant message before any user message (a greeting): kept with
				// the first turn.
				if extra == nil {
					extra = map[string]any{}
				}
				extra["assistant_before"] = text
				continue
			}
			answered = true
			if text != "" {
				answer = append(answer, text)
			}
			if len(m.ToolCalls) > 0 && string(m.ToolCalls) != "null" {
				if extra == nil {
					extra = map[string]any{}
				}
				extra["tool_calls"] = m.ToolCalls
			}
		case "tool", "function":
			if extra == nil {
				extra = map[string]any{}
			}
			tools, _ := extra["tool_results"].([]string)
			extra["tool_results"] = append(tools, text)
		default:
			return nil, c.errorf(line, field+".role", "%q: want system, user, assistant or tool", m.Role)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, c.errorf(line, prefix+"messages", "no user message")
	}
	return recs, nil
}

// metaID is metadata.id or metadata.conversation_id, if metadata is an object.
func metaID(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	if v, ok := m["conversation_id"]; ok {
		return v
	}
	return m["id"]
}

// responseMessage finds the assistant message of a logged response: {"choices": [...]},
// {"body": {"choices": [...]}} (the batch API's output) or a bare choices list.
func (c *conv) responseMessage(line int, field string, raw json.RawMessage) (*chatMessage, string, error) {
	var choices []struct {
		Message *chatMessage `json:"message"`
	}
	if field == "choices" {
		if err := json.Unmarshal(raw, &choices); err != nil {
			return nil, "", c.errorf(line, field, "not a list of choices")
		}
	} else {
		if string(raw) == "null" {
			return nil, "", nil
		}
		var resp struct {
			Choices json.RawMessage `json:"choices"`
			Body    struct {
				Choices json.RawMessage `json:"choices"`
			} `json:"body"`
		}
		if err := json.Unmarshal(raw, &resp); err != nil {
			return nil, "", c.errorf(line, field, "not a JSON object")
		}
		list := resp.Choices
		if list == nil {
			list, field = resp.Body.Choices, field+".body"
		}
		if list == nil {
			return nil, "", nil
		}
		field += ".choices"
		if err := json.Unmarshal(list, &choices); err != nil {
			return nil, "", c.errorf(line, field, "not a list of choices")
		}
	}
	if len(choices) == 0 || choices[0].Message == nil {
		return nil, "", nil
	}
	m := choices[0].Message
	if m.Role == "" {
		m.Role = "assistant"
	}
	return m, field + "[0].message", nil
}

// content returns a message content's text and images: a string, null, or a list of
// parts (text, image_url, input_text, input_image, image).
func (c *conv) content(line int, field string, raw json.RawMessage) (string, []string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := fastUnmarshal(raw, &s); err != nil {
			return "", nil, c.errorf(line, field, "%v", err)
		}
		return s, nil, nil
	}
	var parts []contentPart
	if err := fastUnmarshal(raw, &parts); err != nil {
		return "", nil, c.errorf(line, field, "expected text or a list of parts")
	}
	var text []string
	var images []string
	for i, p := range parts {
		pf := fmt.Sprintf("%s[%d]", field, i)
		switch p.Type {
		case "text", "input_text", "output_text":
			if p.Text == nil {
				return "", nil, c.errorf(line, pf+".text", "missing")
			}
			text = append(text, *p.Text)
		case "image_url", "input_image", "image":
			ref := p.ImageURL
			sub := ".image_url"
			if p.Type == "image" || ref == nil {
				ref, sub = p.Image, ".image"
			}
			url, err := imageURL(ref)
			if err != nil || url == "" {
				return "", nil, c.errorf(line, pf+sub, "expected a URL or {\"url\": ...}")
			}
			path, err := c.image(line, pf+sub, url)
			if err != nil {
				return "", nil, err
			}
			images = append(images, path)
		default:
			return "", nil, c.errorf(line, pf+".type", "%q: want text or image_url", p.Type)
		}
	}
	return strings.Join(text, "\n"), images, nil
}

// imageURL reads "url" or {"url": "url", ...}.
func imageURL(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", fmt.Errorf("missing")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var o struct {
		URL string `json:"url"`
	}
	err := json.Unmarshal(raw, &o)
	return o.URL, err
}
