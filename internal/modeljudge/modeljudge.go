// Package modeljudge is the model judge of m3eval judge --endpoint: it builds the request
// that asks a VLM to score one turn by the rubric (the turn's images, the episode's earlier
// turns, the current message and response, the expected answer, the action's test intent and
// the rubric's definitions in the turn's language), the json_schema response format of the
// rubric's fields and values, and reads the answer back into rubric values, with the reason
// when the answer is unusable. It sends nothing and stores nothing: internal/judgerun runs it
// over a database with internal/vlm's client.
package modeljudge

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/judge"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/vlm"
)

// DefaultPrompt is the built-in prompt template (m3eval judge --print-prompt).
//
//go:embed prompt.tmpl
var DefaultPrompt []byte

// RationaleKey is the answer's key for the judge's reasons.
const RationaleKey = "rationale"

// Prompt is a parsed prompt template: it defines "system" and "user".
type Prompt struct {
	t    *template.Template
	Text string
	Hash string // sha256 of Text, hex
}

// ParsePrompt parses a prompt template. name is the file it came from, for errors.
func ParsePrompt(name string, text []byte) (*Prompt, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs(template.FuncMap{"join": strings.Join}).Parse(string(text))
	if err != nil {
		return nil, fmt.Errorf("prompt %s: %w", name, err)
	}
	for _, part := range []string{"system", "user"} {
		if t.Lookup(part) == nil {
			return nil, fmt.Errorf("prompt %s: it defines no %q template ({{define %q}}…{{end}})", name, part, part)
		}
	}
	h := sha256.Sum256(text)
	return &Prompt{t: t, Text: string(text), Hash: hex.EncodeToString(h[:])}, nil
}

// Judge builds requests for turns and reads their answers, for one rubric and action
// catalogue.
type Judge struct {
	Rubric  *rubric.Rubric
	Actions rubric.Actions
	Prompt  *Prompt
	fields  []*rubric.Field // the fields a judge scores: scale and choice fields
}

// New returns a judge of rb's fields with prompt p. It fails when the rubric has no field a
// judge can score.
func New(rb *rubric.Rubric, actions rubric.Actions, p *Prompt) (*Judge, error) {
	j := &Judge{Rubric: rb, Actions: actions, Prompt: p}
	for i := range rb.Fields {
		if f := &rb.Fields[i]; f.Kind == rubric.KindScale || f.Kind == rubric.KindChoice {
			j.fields = append(j.fields, f)
		}
	}
	if len(j.fields) == 0 {
		return nil, errors.New("the rubric has no scale or choice field to judge")
	}
	return j, nil
}

// Fields are the names of the fields the judge scores, in rubric order.
func (j *Judge) Fields() []string {
	out := make([]string, len(j.fields))
	for i, f := range j.fields {
		out[i] = f.Name
	}
	return out
}

// Language is a turn's language: its meta's, or the one its text is written in.
func Language(t *dataset.Turn) string {
	if m, err := dataset.ParseMeta(t.Meta); err == nil && m.Language != "" {
		return m.Language
	}
	return judge.DetectLanguage(t.UserMessage, t.VLMResponse, t.ExpectedAnswer)
}

// promptField is a field as the prompt template sees it.
type promptField struct {
	Name, Label, Help, Kind string
	Min, Max                int
	Levels                  []promptLevel
	Allowed                 []string
	Restricted              bool // Allowed is a part of the values
	Fixed, FixedWhy         string
	NoExpected              string
}

type promptLevel struct{ Value, Meaning string }

type promptTurn struct {
	Turn           int // its place in the conversation, from 1
	User, Response string
}

// promptData is what the prompt template renders. It holds nothing that names whose answer
// is judged: no sample id, episode id, model or image file name (ids of VLMEvalKit and
// lmms-eval imports read "<model>/<dataset>/<index>_turn_n", and a judge that sees the
// model's name is biased). A turn is named by its place: turn Turn of Turns.
type promptData struct {
	Chinese                  bool
	Language                 string
	Guide                    string
	Fields                   []promptField
	TaskType                 string
	Turn, Turns              int
	Action, ActionLabel      string
	Intent, Good             string
	History                  []promptTurn
	User, Response, Expected string
	Images                   int
}

// item is what the rubric's rules know of a turn.
func item(t *dataset.Turn) rubric.Item { return rubric.Item{ActionType: t.ActionType, Turn: t.Turn} }

// allowed is the values a field may take on this turn, as the rubric spells them.
func allowed(f *rubric.Field, it rubric.Item) []string {
	if f.Kind == rubric.KindScale {
		if v, _, ok := f.FixedValue(it); ok {
			return []string{v}
		}
		out := make([]string, 0, f.Max-f.Min+1)
		for n := f.Min; n <= f.Max; n++ {
			out = append(out, strconv.Itoa(n))
		}
		return out
	}
	return f.Allowed(it)
}

func (j *Judge) data(turns []dataset.Turn, i int, images int) promptData {
	t := &turns[i]
	lang := Language(t)
	zh := lang == "zh"
	pick := func(en, zhs string) string {
		if zh && zhs != "" {
			return zhs
		}
		return en
	}
	d := promptData{Chinese: zh, Language: lang, Guide: pick(j.Rubric.GuideEn, j.Rubric.GuideZh),
		TaskType: t.TaskType, Turn: i + 1, Turns: len(turns), Action: t.ActionType,
		User: t.UserMessage, Response: t.VLMResponse, Expected: t.ExpectedAnswer, Images: images}
	if a, ok := j.Actions[t.ActionType]; ok {
		d.ActionLabel, d.Intent, d.Good = pick(a.LabelEn, a.LabelZh), pick(a.IntentEn, a.IntentZh), pick(a.GoodEn, a.GoodZh)
	} else {
		d.ActionLabel = t.ActionType
		d.Intent = pick("not in the action-space catalogue", "不在动作空间目录中")
	}
	it := item(t)
	for _, f := range j.fields {
		pf := promptField{Name: f.Name, Label: pick(f.LabelEn, f.LabelZh), Help: pick(f.HelpEn, f.HelpZh), Kind: string(f.Kind),
			Min: f.Min, Max: f.Max, NoExpected: pick(f.NoExpectedEn, f.NoExpectedZh)}
		opts := f.Choices
		if f.Kind == rubric.KindScale {
			opts = f.Levels
		}
		for _, o := range opts {
			pf.Levels = append(pf.Levels, promptLevel{Value: o.Value, Meaning: pick(o.En, o.Zh)})
		}
		pf.Allowed = allowed(f, it)
		pf.Restricted = len(pf.Allowed) < len(opts)
		if v, rule, ok := f.FixedValue(it); ok {
			pf.Fixed, pf.FixedWhy = v, pick(rule.WhyEn, rule.WhyZh)
		}
		d.Fields = append(d.Fields, pf)
	}
	for k, h := range turns[:i] {
		d.History = append(d.History, promptTurn{Turn: k + 1, User: h.UserMessage, Response: h.VLMResponse})
	}
	return d
}

// Images returns the images turns[i] is judged with. They are those of the episode's turns
// up to it, each once, in order of first use (a turn usually repeats its episode's images).
func Images(turns []dataset.Turn, i int) []string {
	var out []string
	for _, t := range turns[:i+1] {
		for _, im := range t.Images {
			if !slices.Contains(out, im) {
				out = append(out, im)
			}
		}
	}
	return out
}

// Request is what is sent for one turn: the messages and the response format.
type Request struct {
	Messages []vlm.Message
	Format   json.RawMessage
	Language string
}

// Build renders the request that judges turns[i], where turns is its episode in order.
// images are the references sent: data or http(s) URLs, or local paths the client reads.
func (j *Judge) Build(turns []dataset.Turn, i int, images []string) (Request, error) {
	d := j.data(turns, i, len(images))
	var sys, user bytes.Buffer
	if err := j.Prompt.t.ExecuteTemplate(&sys, "system", d); err != nil {
		return Request{}, fmt.Errorf("prompt: %w", err)
	}
	if err := j.Prompt.t.ExecuteTemplate(&user, "user", d); err != nil {
		return Request{}, fmt.Errorf("prompt: %w", err)
	}
	return Request{
		Messages: []vlm.Message{
			{Role: vlm.RoleSystem, Text: sys.String()},
			{Role: vlm.RoleUser, Text: user.String(), Images: images},
		},
		Format:   j.Schema(&turns[i]),
		Language: d.Language,
	}, nil
}

// Schema returns the response_format the judge sends with turn t. It is a json_schema whose
// properties are the rubric's fields with the values allowed on this turn (whole numbers for
// scales, the choices as written), plus the rationale, all required.
func (j *Judge) Schema(t *dataset.Turn) json.RawMessage {
	it := item(t)
	var b bytes.Buffer
	b.WriteString(`{"type":"json_schema","json_schema":{"name":"m3eval_judgement","strict":true,"schema":{"type":"object","properties":{`)
	req := make([]string, 0, len(j.fields)+1)
	for k, f := range j.fields {
		if k > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(f.Name)
		b.Write(name)
		vals := allowed(f, it)
		if f.Kind == rubric.KindScale {
			b.WriteString(`:{"type":"integer","enum":[` + strings.Join(vals, ",") + `]}`)
		} else {
			enum, _ := json.Marshal(vals)
			b.WriteString(`:{"type":"string","enum":`)
			b.Write(enum)
			b.WriteByte('}')
		}
		req = append(req, f.Name)
	}
	req = append(req, RationaleKey)
	reqJSON, _ := json.Marshal(req)
	b.WriteString(`,"` + RationaleKey + `":{"type":"string"}},"required":`)
	b.Write(reqJSON)
	b.WriteString(`,"additionalProperties":false}}}`)
	return b.Bytes()
}

// Answer is a judge's usable answer for one turn: a value for every field, and its reasons.
type Answer struct {
	Fields, Values []string
	Rationale      string
}

// AnswerError says why an answer cannot be stored: the problems, each naming the field.
type AnswerError struct {
	Problems []string
}

// Error implements error.
func (e *AnswerError) Error() string { return strings.Join(e.Problems, "; ") }

// Parse reads a judge's answer for a turn: one JSON object, bare, in a ``` fence or inside
// other text. Every field must have a value the rubric allows on this turn; otherwise the
// error is an *AnswerError listing every problem (sent back to the judge on the re-ask).
func (j *Judge) Parse(t *dataset.Turn, text string) (Answer, error) {
	obj, err := extractJSON(text)
	if err != nil {
		return Answer{}, &AnswerError{Problems: []string{err.Error()}}
	}
	it := item(t)
	var a Answer
	var problems []string
	for _, f := range j.fields {
		raw, ok := obj[f.Name]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s is missing", f.Name))
			continue
		}
		v, err := value(f, raw, it)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", f.Name, err))
			continue
		}
		a.Fields, a.Values = append(a.Fields, f.Name), append(a.Values, v)
	}
	if raw, ok := obj[RationaleKey]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			a.Rationale = s
		} else {
			a.Rationale = string(raw)
		}
	}
	if len(problems) > 0 {
		return Answer{}, &AnswerError{Problems: problems}
	}
	return a, nil
}

// value reads one field's JSON value: a whole number (or its string) on a scale, a choice by
// its spelling (any case), null as the NA choice; the rubric's rules for the turn apply.
func value(f *rubric.Field, raw json.RawMessage, it rubric.Item) (string, error) {
	raw = bytes.TrimSpace(raw)
	text, null := string(raw), bytes.Equal(raw, []byte("null"))
	var s string
	if json.Unmarshal(raw, &s) == nil {
		text = s
	}
	if f.Kind == rubric.KindScale {
		n, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if null || err != nil || n != float64(int(n)) {
			return "", fmt.Errorf("%s is not one of %s", show(text, null), strings.Join(allowed(f, it), ", "))
		}
	} else if !null && strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("no value: choose one of %s", strings.Join(allowed(f, it), ", "))
	}
	v, err := f.ParseScore(text, null, it)
	if err != nil {
		return "", fmt.Errorf("%s is not allowed on this turn: choose one of %s", show(text, null), strings.Join(allowed(f, it), ", "))
	}
	if v == "" { // a choice field without an NA choice, given null
		return "", fmt.Errorf("null is not a value: choose one of %s", strings.Join(allowed(f, it), ", "))
	}
	return v, nil
}

func show(text string, null bool) string {
	if null {
		return "null"
	}
	return strconv.Quote(text)
}

// extractJSON finds the answer's JSON object: the whole text, else the first ``` fence that
// holds one, else the first balanced {…} in the text.
func extractJSON(text string) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(strings.TrimSpace(text)), &obj) == nil && obj != nil {
		return obj, nil
	}
	rest := text
	for {
		_, after, ok := strings.Cut(rest, "```")
		if !ok {
			break
		}
		body, tail, ok := strings.Cut(after, "```")
		if !ok {
			break
		}
		if nl := strings.IndexByte(body, '\n'); nl >= 0 && !strings.Contains(body[:nl], "{") {
			body = body[nl+1:] // the fence's language tag
		}
		if json.Unmarshal([]byte(strings.TrimSpace(body)), &obj) == nil && obj != nil {
			return obj, nil
		}
		rest = tail
	}
	for start := strings.IndexByte(text, '{'); start >= 0; {
		if end := balanced(text[start:]); end > 0 {
			if json.Unmarshal([]byte(text[start:start+end]), &obj) == nil && obj != nil {
				return obj, nil
			}
		}
		next := strings.IndexByte(text[start+1:], '{')
		if next < 0 {
			break
		}
		start += 1 + next
	}
	return nil, fmt.Errorf("the answer holds no JSON object: %s", snippet(text))
}

// balanced returns the length of the {…} object s starts with (0: not closed), skipping
// braces inside JSON strings.
func balanced(s string) int {
	depth, inStr, esc := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return 0
}

func snippet(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		s = strings.ToValidUTF8(s[:120], "") + "…"
	}
	if s == "" {
		return "(empty)"
	}
	return strconv.Quote(s)
}

// Reask is the message that asks again after an unusable answer, in the turn's language.
func Reask(lang string, err error) string {
	if lang == "zh" {
		return "你的回答无法使用：" + err.Error() + "。请只输出一个 JSON 对象，包含每个字段在本轮允许的取值和 \"rationale\"。"
	}
	return "Your answer cannot be used: " + err.Error() + ". Answer again with one JSON object only, giving every field a value allowed on this turn, and \"rationale\"."
}

// Params are the sampling parameters a version is made of.
type Params struct {
	Temperature *float64 `json:"temperature,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Rubric      string   `json:"rubric"` // the rubric's version: its text is in the prompt
}

// Version names a judge's configuration: the model, the prompt and the parameters. Scores
// of one version are comparable; a rerun with the same version skips what it scored.
func Version(model string, p *Prompt, params Params) (version string, paramsJSON []byte) {
	paramsJSON, _ = json.Marshal(params)
	h := sha256.New()
	h.Write([]byte(model))
	h.Write([]byte{0})
	h.Write([]byte(p.Hash))
	h.Write([]byte{0})
	h.Write(paramsJSON)
	return model + "@" + hex.EncodeToString(h.Sum(nil))[:12], paramsJSON
}
