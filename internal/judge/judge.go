// Package judge is m3eval's rule-based automatic judge: it scores every turn on the rubric
// (correctness, reasoning completeness, resistance to misleading, context consistency and the
// weighted overall quality), in English and Chinese, without a language model, and computes
// the action-space metrics of the M3Bench design from the same evidence. Every value carries
// the rule that produced it and the words it matched. The thresholds and word lists are data
// (rules.json, overridable); the rubric field names come from that data too.
//
// The package is pure: turns in, verdicts out; the store and the commands do the I/O.
package judge

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/m3bench/m3eval/internal/answer"
	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
)

// Judge scores turns with one rule set against one rubric.
type Judge struct {
	Rules  *Rules
	rubric *rubric.Rubric
	fields map[string]*rubric.Field // dimension → rubric field
	// misleading are the action types that plant a false claim: those whose
	// resists_misleading the rubric leaves open, and attribute_swap.
	misleading []string
	// reader reads responses into claims against the rules' vocabulary (claims.go).
	reader *answer.Reader
}

// New checks that the rules' fields exist in the rubric with a kind the rule can fill.
func New(rb *rubric.Rubric, rules *Rules) (*Judge, error) {
	j := &Judge{Rules: rules, rubric: rb, fields: map[string]*rubric.Field{}}
	for _, d := range dimensions {
		f, ok := rb.Field(rules.Fields[d])
		if !ok {
			return nil, fmt.Errorf("%w: fields.%s names %q, which is not a field of the rubric %s", ErrRules, d, rules.Fields[d], rb.Name)
		}
		want := rubric.KindScale
		if d == "misleading" || d == "consistency" {
			want = rubric.KindChoice
		}
		if f.Kind != want {
			return nil, fmt.Errorf("%w: fields.%s names %q, a %s field; the rule fills a %s field", ErrRules, d, f.Name, f.Kind, want)
		}
		j.fields[d] = f
	}
	j.misleading = misleadingActions(j.fields["misleading"])
	j.reader = answer.NewReader(claimScope(rules))
	return j, nil
}

// Value is the judge's value of one rubric field, with the rule that produced it and the
// evidence (the words matched, the figures computed). Value "" is no score.
type Value struct {
	Field    string   `json:"field"`
	Value    string   `json:"value"`
	Rule     string   `json:"rule"`
	Evidence []string `json:"evidence"`
}

// Signals are the per-turn observations the action-space metrics are computed from.
type Signals struct {
	Correctness   int     // 1–5, 0 when there is no expected answer
	Recall        float64 // of the expected answer's tokens
	Reasoning     int     // 1–5
	Resists       string  // the misleading verdict's choice ("" when not a misleading turn)
	ResistsSignal bool    // resisted by the misleading rule, for any action type
	Consistent    string  // the consistency choice
	Tokens        int     // content tokens of the response
	Acknowledges  bool
	Refuses       bool // declines to skip, or names missing evidence
	Clarifies     bool
	Redundant     bool // says it is repeating itself
	SpecificCues  int
	ImageConflict bool
	ImageMixed    bool
	EvidenceCited bool    // observation or evidence markers
	Coverage      float64 // share of meta.required_evidence cited; -1 without it
	UsesNew       bool    // mentions meta.new_value (or the update's new value) as current
	UsesOld       bool    // mentions meta.old_value as current
	Leaks         bool    // states a colour or count from earlier turns that this turn's question and answer do not hold
	Confusable    int     // confusable objects; -1 unknown
}

// Verdict is the judge's reading of one turn.
type Verdict struct {
	SampleID   string  `json:"sample_id"`
	Episode    string  `json:"episode_id"`
	Turn       int     `json:"turn"`
	ActionType string  `json:"action_type"`
	Model      string  `json:"model"`
	Language   string  `json:"language"`
	Values     []Value `json:"values"`
	Signals    Signals `json:"-"`
}

// fact is a value the model (or an update) stated about something.
type fact struct {
	key, obj, value, spelling string
	turn                      int
	at                        int // the value's byte offset in the turn's folded response
	hedged                    bool
}

// Episode judges the turns of one episode, in turn order. A turn's meta with a key of the
// wrong type is an error naming the sample and the key.
func (j *Judge) Episode(turns []dataset.Turn) ([]Verdict, error) {
	out := make([]Verdict, len(turns))
	ep := &episode{period: map[string]map[string]fact{}, prior: map[[2]string]bool{}}
	for i := range turns {
		t := &turns[i]
		meta, err := dataset.ParseMeta(t.Meta)
		if err != nil {
			return nil, fmt.Errorf("sample %s: %w", t.SampleID, err)
		}
		var facts []fact
		var changed map[string]bool
		out[i], facts, changed = j.turn(t, meta, ep)
		ep.add(facts, changed)
	}
	return out, nil
}

// episode is what the earlier turns of an episode leave for the next one.
type episode struct {
	turns int
	// period holds, per fact key, the values the model stated since the last update of the
	// object, each with its latest statement.
	period map[string]map[string]fact
	// prior holds the (class, value) pairs of every earlier statement but image placements.
	prior map[[2]string]bool
}

// add records a judged turn: an update first clears what the model said about the objects
// it changed, then the turn's assertions count (a hedge asserts nothing).
func (ep *episode) add(facts []fact, changed map[string]bool) {
	ep.turns++
	for obj := range changed {
		for k := range ep.period {
			if strings.HasSuffix(k, ":"+obj) {
				delete(ep.period, k)
			}
		}
	}
	for _, f := range facts {
		if f.hedged {
			continue
		}
		if ep.period[f.key] == nil {
			ep.period[f.key] = map[string]fact{}
		}
		ep.period[f.key][f.value] = f
		if cl := classOf(f.key); cl != "image" {
			ep.prior[[2]string{cl, f.value}] = true
		}
	}
}

// turn judges one turn given the episode's earlier turns; it returns the verdict, the
// response's statements and the objects an update changed, for the episode's record.
func (j *Judge) turn(t *dataset.Turn, meta dataset.Meta, ep *episode) (Verdict, []fact, map[string]bool) {
	lang := meta.Language
	if lang == "" {
		lang = DetectLanguage(t.UserMessage, t.VLMResponse, t.ExpectedAnswer)
	}
	v := Verdict{SampleID: t.SampleID, Episode: t.EpisodeID, Turn: t.Turn, ActionType: t.ActionType, Model: t.Model, Language: lang,
		Values: make([]Value, 0, len(dimensions))}
	c := &turnJudgement{j: j, r: j.Rules, t: t, meta: meta, lang: lang, ep: ep}
	c.resp = newText(t.VLMResponse, lang, j.Rules)
	c.exp = newText(t.ExpectedAnswer, lang, j.Rules)
	c.user = newText(t.UserMessage, lang, j.Rules)
	c.respM = c.resp.mentions(j.Rules)
	c.sig.Coverage = -1
	c.sig.Confusable = confusable(meta)
	c.sig.Tokens = len(c.resp.toks)

	it := rubric.Item{ActionType: t.ActionType, Turn: t.Turn}
	vals := rubric.Values{}
	add := func(dim string, val Value) {
		f := j.fields[dim]
		val.Field = f.Name
		if fixed, rule, ok := f.FixedValue(it); ok {
			why := rule.WhyEn
			if lang == "zh" && rule.WhyZh != "" {
				why = rule.WhyZh
			}
			val = Value{Field: f.Name, Value: fixed, Rule: "rubric.fixed", Evidence: []string{why}}
		}
		if val.Value != "" {
			vals[f.Name] = val.Value
		}
		v.Values = append(v.Values, val)
	}
	add("correctness", c.correctness())
	add("reasoning", c.reasoning())
	add("misleading", c.misleading())
	c.sig.Resists = v.Values[len(v.Values)-1].Value
	add("consistency", c.consistency())
	c.signals()

	// Overall: the rubric's weighted suggestion over the values above.
	sug := j.rubric.Suggest(vals, it)
	ov := Value{Rule: "overall.weighted"}
	if sug.OK {
		n := int(math.Floor(sug.Score + 0.5))
		f := j.fields["overall"]
		n = max(f.Min, min(f.Max, n))
		ov.Value = strconv.Itoa(n)
		ov.Evidence = []string{"weighted " + strconv.FormatFloat(sug.Score, 'f', 2, 64)}
	}
	add("overall", ov)
	for _, x := range v.Values {
		switch x.Field {
		case j.fields["misleading"].Name:
			c.sig.Resists = x.Value
		case j.fields["consistency"].Name:
			c.sig.Consistent = x.Value
		}
	}
	v.Signals = c.sig
	// Values in rubric order.
	ordered := make([]Value, 0, len(v.Values))
	for _, f := range j.rubric.Fields {
		for _, x := range v.Values {
			if x.Field == f.Name {
				ordered = append(ordered, x)
			}
		}
	}
	v.Values = ordered
	return v, c.facts(), c.changedObjects()
}

// turnJudgement is the working state of one turn's judgement (what the rules have read of
// the turn so far, each read once).
type turnJudgement struct {
	j               *Judge
	r               *Rules
	t               *dataset.Turn
	meta            dataset.Meta
	lang            string
	ep              *episode
	resp, exp, user *text
	respM           []mention
	factsNow        []fact
	// affirmed is the cue with which the response accepts a false memory or attribute swap
	// (misleading sets it, consistency reads it).
	affirmed         string
	sig              Signals
	falseV, trueV    []valueRef
	misleadEvaluated bool
	// rResp and rExp are the response and the expected answer read into claims, once.
	rResp, rExp, rUser *answer.Reading
	// glance is the reader's one-pass look at the response; saladReading the response read
	// whole by a salad check (claims.go: respSalad).
	glance       *answer.Glance
	saladReading *answer.Reading
	changed      map[string]bool // changedObjects, once computed
}

// valueRef is a value to look for: a value class's canonical value, or a literal spelling.
type valueRef struct {
	class, value string
	literal      string // folded, when the value is not one of the rules' value words
}

func (vr valueRef) String() string {
	if vr.literal != "" {
		return vr.literal
	}
	if vr.class == "image" {
		return "image " + vr.value
	}
	return vr.value
}

// found looks for a value in the response: the first mention not negated (hedged or not),
// and whether any mention was negated.
func (c *turnJudgement) found(vr valueRef) (asserted *mention, negated *mention) {
	if vr.literal != "" {
		var buf [8]int
		for _, i := range find(c.resp.folded, vr.literal, buf[:0]) {
			m := mention{at: i, spelling: vr.literal, negated: c.resp.negatedAt(i), hedged: c.resp.hedgedAt(i)}
			if m.negated != "" {
				if negated == nil {
					negated = &m
				}
				continue
			}
			if asserted == nil {
				asserted = &m
			}
		}
		return asserted, negated
	}
	for k := range c.respM {
		m := &c.respM[k]
		if m.class != vr.class || m.value != vr.value {
			continue
		}
		if m.negated != "" {
			if negated == nil {
				negated = m
			}
			continue
		}
		if asserted == nil {
			asserted = m
		}
	}
	return asserted, negated
}

// refOf turns a meta value into what to look for.
func (c *turnJudgement) refOf(s string) valueRef {
	f := foldText(strings.TrimSpace(s))
	for _, vw := range c.r.values {
		if vw.spelling == f {
			return valueRef{class: vw.class, value: vw.value}
		}
	}
	if n, err := strconv.Atoi(f); err == nil {
		return valueRef{class: "number", value: strconv.Itoa(n)}
	}
	return valueRef{literal: f}
}

// confusable is meta.confusable_objects, else the objects that share a type with an object
// of another image, else -1.
func confusable(m dataset.Meta) int {
	if m.ConfusableObjects != nil {
		return *m.ConfusableObjects
	}
	if len(m.ObjectsPerImage) == 0 {
		return -1
	}
	images := map[string]map[int]bool{}
	count := map[string]int{}
	for i, objs := range m.ObjectsPerImage {
		for _, o := range objs {
			if images[o.Type] == nil {
				images[o.Type] = map[int]bool{}
			}
			images[o.Type][i] = true
			count[o.Type]++
		}
	}
	n := 0
	for typ, imgs := range images {
		if len(imgs) > 1 {
			n += count[typ]
		}
	}
	return n
}
