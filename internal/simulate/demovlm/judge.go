package demovlm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/vlm"
)

// The judge personas answer a model judge's requests (m3eval judge --endpoint): the request's
// model is "judge-" and the persona. They read the fields and the values allowed on the turn
// from the request's json_schema response format, so they follow any rubric.
//
//	judge-careful       the human labels of the turn when the server has them (the demo's
//	                    labeled sample, or SetJudgeLabels), else a sober reading of the turn
//	judge-lenient       the best value of every field, inside a chatty ```json fence
//	judge-outofschema   values outside the rubric (correctness 7, "Maybe"), every time
//	judge-sloppy        outside the rubric first; right when asked again
//	judge-prose         no JSON at all
//	judge-na            NA on every choice field, also where the turn forbids it
//	judge-timeout       never answers
//	judge-http500       HTTP 500 every time
//	judge-ratelimited   HTTP 429 (Retry-After: 0) every time
//	judge-flaky         HTTP 429 on the first try of each request, then careful
//
// and the delivery personas of delivery.go (judge-streamed, judge-parts, judge-error200,
// judge-cut, judge-retryafter, judge-redirect): careful answers delivered as some servers do.
const JudgePrefix = "judge-"

// JudgePersonas lists the judge personas.
var JudgePersonas = []string{"careful", "lenient", "outofschema", "sloppy", "prose", "na", "timeout", "http500", "ratelimited", "flaky",
	"streamed", "parts", "error200", "cut", "retryafter", "redirect"}

// judgeLabel is one labeled turn the careful judge knows.
type judgeLabel struct {
	values map[string]json.RawMessage
}

// judgeState is what the judge personas keep.
type judgeState struct {
	mu     sync.RWMutex
	labels map[string]judgeLabel // by labelKey of the turn's user message and response
	tried  sync.Map              // flaky: request bodies answered 429 once
}

// SetJudgeLabels gives the careful judge labeled turns to answer with, read from a labeled
// file in the guide's format (a JSON array, or JSON Lines, of turns with human_annotation);
// they replace the demo's labeled sample.
func (s *Server) SetJudgeLabels(data []byte) error {
	labels, err := parseLabels(data)
	if err != nil {
		return err
	}
	s.judge.mu.Lock()
	s.judge.labels = labels
	s.judge.mu.Unlock()
	return nil
}

func parseLabels(data []byte) (map[string]judgeLabel, error) {
	type turn struct {
		SampleID        string                     `json:"sample_id"`
		UserMessage     string                     `json:"user_message"`
		VLMResponse     string                     `json:"vlm_response"`
		HumanAnnotation map[string]json.RawMessage `json:"human_annotation"`
	}
	type rec struct {
		turn
		Turns []turn `json:"turns"` // an episode record
	}
	out := map[string]judgeLabel{}
	add := func(r rec) {
		for _, t := range append(r.Turns, r.turn) {
			if t.SampleID != "" && len(t.HumanAnnotation) > 0 {
				out[labelKey(t.UserMessage, t.VLMResponse)] = judgeLabel{values: t.HumanAnnotation}
			}
		}
	}
	var recs []rec
	if err := json.Unmarshal(data, &recs); err == nil {
		for _, r := range recs {
			add(r)
		}
		return out, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	for dec.More() {
		var r rec
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("judge labels: %w", err)
		}
		add(r)
	}
	return out, nil
}

// demoLabels are the demo's labeled sample, the careful judge's default labels.
func demoLabels() map[string]judgeLabel {
	b, err := annotations.Demo.ReadFile("demo/labeled_sample.json")
	if err != nil {
		return nil
	}
	l, _ := parseLabels(b)
	return l
}

// schemaField is a property of the request's json_schema.
type schemaField struct {
	name    string
	integer bool
	enum    []json.RawMessage
}

// judgeRequest is what the personas read of a request.
type judgeRequest struct {
	fields  []schemaField
	turn    string // the text of the first user message: the turn to judge
	reasked bool
}

func readJudgeRequest(body []byte) (*judgeRequest, error) {
	var raw struct {
		ResponseFormat struct {
			JSONSchema struct {
				Schema struct {
					Properties json.RawMessage `json:"properties"`
					Required   []string        `json:"required"`
				} `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, err
	}
	var props map[string]struct {
		Type string            `json:"type"`
		Enum []json.RawMessage `json:"enum"`
	}
	if err := json.Unmarshal(raw.ResponseFormat.JSONSchema.Schema.Properties, &props); err != nil {
		return nil, fmt.Errorf("no json_schema response_format")
	}
	r := &judgeRequest{}
	for _, name := range raw.ResponseFormat.JSONSchema.Schema.Required { // in the request's order
		p, ok := props[name]
		if !ok || len(p.Enum) == 0 {
			continue
		}
		r.fields = append(r.fields, schemaField{name: name, integer: p.Type == "integer", enum: p.Enum})
	}
	_, msgs, err := vlm.DecodeRequest(body)
	if err != nil {
		return nil, err
	}
	users := 0
	for _, m := range msgs {
		if m.Role == vlm.RoleUser {
			if users == 0 {
				r.turn = m.Text
			}
			users++
		}
	}
	r.reasked = users > 1
	return r, nil
}

// serveJudge answers a judge persona's request.
func (s *Server) serveJudge(w http.ResponseWriter, r *http.Request, n int64, model string, body []byte) {
	persona := strings.TrimPrefix(model, JudgePrefix)
	delivery := deliveryOf(persona)
	if delivery != "" {
		persona = "careful"
	}
	switch persona {
	case "timeout":
		<-r.Context().Done()
		return
	case "http500":
		http.Error(w, `{"error":{"message":"internal error (scripted judge)"}}`, http.StatusInternalServerError)
		return
	case "ratelimited":
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"error":{"message":"rate limited (scripted judge)"}}`, http.StatusTooManyRequests)
		return
	case "flaky":
		key := digest(body)
		if _, again := s.judge.tried.LoadAndDelete(key); !again {
			s.judge.tried.Store(key, true)
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"error":{"message":"rate limited (scripted judge)"}}`, http.StatusTooManyRequests)
			return
		}
		persona = "careful"
	}
	req, err := readJudgeRequest(body)
	if err != nil {
		http.Error(w, fmt.Sprintf(`{"error":{"message":%q}}`, "judge request: "+err.Error()), http.StatusBadRequest)
		return
	}
	text := s.judgeAnswer(persona, req)
	resp := map[string]any{
		"id": fmt.Sprintf("demo-judge-%d", n), "object": "chat.completion", "model": model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": text}}},
		// A rough count, so a run's token totals are not all zero: a token is about 4 bytes.
		"usage": map[string]int{"prompt_tokens": len(body) / 4, "completion_tokens": len(text)/4 + 1},
	}
	if deliver(w, delivery, digest(body), &s.judge.tried, resp, text) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// judgeAnswer is the persona's answer text.
func (s *Server) judgeAnswer(persona string, req *judgeRequest) string {
	out := map[string]json.RawMessage{}
	why := "scripted judge"
	switch persona {
	case "prose":
		return "The response looks fine to me; I would rate it highly."
	case "outofschema":
		for _, f := range req.fields {
			if f.integer {
				out[f.name] = json.RawMessage("7")
			} else {
				out[f.name] = json.RawMessage(`"Maybe"`)
			}
		}
	case "sloppy":
		if !req.reasked {
			return s.judgeAnswer("outofschema", req)
		}
		return "Sorry about that. Here it is:\n```json\n" + s.judgeAnswer("careful", req) + "\n```"
	case "na":
		for _, f := range req.fields {
			if f.integer {
				out[f.name] = f.enum[len(f.enum)-1]
			} else {
				out[f.name] = json.RawMessage(`"NA"`)
			}
		}
	case "lenient":
		for _, f := range req.fields {
			out[f.name] = best(f)
		}
		why = "looks good"
	default: // careful
		if l := s.label(req.turn); l != nil {
			why = "the human label of this turn"
			for _, f := range req.fields {
				v, ok := l.values[f.name]
				switch {
				case !ok:
					out[f.name] = sober(f, req.turn)
				case string(v) == "null":
					out[f.name] = json.RawMessage(`"NA"`)
				default:
					out[f.name] = v
				}
			}
		} else {
			why = "read from the turn"
			for _, f := range req.fields {
				out[f.name] = sober(f, req.turn)
			}
		}
	}
	out["rationale"], _ = json.Marshal(why)
	b, _ := json.Marshal(out)
	if persona == "lenient" {
		return "Sure! Here is my judgement of the turn.\n```json\n" + string(b) + "\n```\nLet me know if you need more."
	}
	return string(b)
}

// label finds the labeled turn the request is about by what the built-in prompt shows of
// it, the current user message and the model's response (the prompt names no sample id:
// the judge is blind to whose answer it is).
func (s *Server) label(turn string) *judgeLabel {
	key := ""
	// The response ends where the expected answer's line starts (a response may hold blank
	// lines of its own).
	for _, m := range [][4]string{{"Current user message: ", "\n\nModel response: ", "\n\nExpected answer: ", "\n\nNo expected answer."},
		{"当前用户消息：", "\n\n模型回复：", "\n\n预期答案：", "\n\n无预期答案。"}} {
		if _, rest, ok := strings.Cut(turn, m[0]); ok {
			if user, rest, ok := strings.Cut(rest, m[1]); ok {
				end := strings.LastIndex(rest, m[2])
				if end < 0 {
					end = strings.LastIndex(rest, m[3])
				}
				if end >= 0 {
					key = labelKey(user, rest[:end])
					break
				}
			}
		}
	}
	s.judge.mu.RLock()
	defer s.judge.mu.RUnlock()
	if l, ok := s.judge.labels[key]; ok {
		return &l
	}
	return nil
}

// labelKey is the careful judge's key of a labeled turn.
func labelKey(user, response string) string { return user + "\x00" + response }

// best is a field's best value: the largest number, or Yes when allowed.
func best(f schemaField) json.RawMessage {
	if f.integer {
		return f.enum[len(f.enum)-1]
	}
	for _, v := range f.enum {
		if string(v) == `"Yes"` {
			return v
		}
	}
	return f.enum[0]
}

// sober is the careful judge's value without a label: a middle score, and a choice that is
// allowed (Yes before No before NA), so the answer always fits the schema.
func sober(f schemaField, _ string) json.RawMessage {
	if f.integer {
		mid := f.enum[len(f.enum)/2]
		if _, err := strconv.Atoi(string(mid)); err == nil {
			return mid
		}
		return f.enum[0]
	}
	for _, want := range []string{`"Yes"`, `"No"`} {
		if slices.ContainsFunc(f.enum, func(v json.RawMessage) bool { return string(v) == want }) {
			return json.RawMessage(want)
		}
	}
	return f.enum[0]
}

// isJudgeModel tells a judge persona's request by its model.
func isJudgeModel(model string) bool { return strings.HasPrefix(model, JudgePrefix) }
