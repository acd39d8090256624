package judge

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/answer"
	"github.com/m3bench/m3eval/internal/dataset"
)

// The action-space metrics of the M3Bench design (shared/spec/action-space.md), per action
// type and model, computed from the judge's per-turn signals. A rate (a yes/no per turn) gets
// the 95% Wilson score interval; a score in [0,1] per turn (evidence coverage, the
// Cross-Image Confusion Score) gets a 95% percentile bootstrap interval over turns, seeded.

// Interval kinds.
const (
	IntervalWilson    = "wilson"
	IntervalBootstrap = "bootstrap"
)

// Estimate is a metric's mean over its N observations with its 95% interval (Interval names
// the kind: IntervalWilson or IntervalBootstrap). When the interval is undefined, Lo and Hi are
// NaN (null in JSON) and NoInterval says why.
type Estimate struct {
	N          int     `json:"n"`
	Value      float64 `json:"value"`
	Lo         float64 `json:"ci_low"`
	Hi         float64 `json:"ci_high"`
	Interval   string  `json:"interval"`
	NoInterval string  `json:"no_interval,omitempty"`
}

// nullEnds are an estimate's interval ends as JSON writes them: null when undefined (JSON has
// no NaN). A row's MarshalJSON embeds them beside the row, where they take the place of
// Estimate's own (shallower fields win in encoding/json) and come last, as they always have.
type nullEnds struct {
	Lo *float64 `json:"ci_low"`
	Hi *float64 `json:"ci_high"`
}

func (e Estimate) nullEnds() nullEnds { return nullEnds{finite(e.Lo), finite(e.Hi)} }

// MetricRow is one metric of one action type and model.
type MetricRow struct {
	Action string `json:"action_type"`
	Model  string `json:"model"`
	Metric string `json:"metric"`
	Estimate
}

// MarshalJSON writes an undefined interval's ends as null.
func (r MetricRow) MarshalJSON() ([]byte, error) {
	type plain MetricRow
	return json.Marshal(struct {
		plain
		nullEnds
	}{plain(r), r.nullEnds()})
}

// MarshalJSON writes an undefined interval's ends as null.
func (r TrendRow) MarshalJSON() ([]byte, error) {
	type plain TrendRow
	return json.Marshal(struct {
		plain
		nullEnds
	}{plain(r), r.nullEnds()})
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// TrendRow is a cross-image score for one model in one bin of a trend dimension.
type TrendRow struct {
	Score     string `json:"score"`
	Dimension string `json:"dimension"`
	Bin       string `json:"bin"`
	Model     string `json:"model"`
	Estimate
}

// MetricsReport is what m3eval score --metrics prints.
type MetricsReport struct {
	Rules     string      `json:"rules"`
	Bootstrap int         `json:"bootstrap_replicates"`
	Seed      uint64      `json:"seed"`
	Metrics   []MetricRow `json:"metrics"`
	Trends    []TrendRow  `json:"trends"`
}

// Metric names.
const (
	MEvidenceCoverage     = "evidence_coverage"
	MRefusalRate          = "refusal_rate"
	MAcknowledgment       = "acknowledgment"
	MUpdateRate           = "update_rate"
	MUptake               = "uptake"
	MResistanceRate       = "resistance_rate"
	MEvidenceCitation     = "evidence_citation"
	MUpdateResponsiveness = "update_responsiveness"
	MTemporalConsistency  = "temporal_consistency"
	MFocusMaintenance     = "focus_maintenance"
	MConciseness          = "conciseness"
	MRedundancyDetection  = "redundancy_detection"
	MSpecificity          = "specificity"
	MContextIsolation     = "context_isolation"
	MStepAccuracy         = "step_accuracy"
	MLogicDependency      = "logic_dependency"
	MExplanationQuality   = "explanation_quality"
	MReasoningAdjustment  = "reasoning_adjustment"
	MInfoOptimization     = "information_optimization"
	MCrossImageConfusion  = "cross_image_confusion_score"
	MDisambiguation       = "disambiguation_score"
	DimConfusable         = "confusable_objects"
	DimConversationLength = "conversation_length"
	binUnknown            = "unknown"
	// ActionFiller is the action the metrics file the cross-image test's filler turns under
	// (distraction turns of phase filler_injection), apart from the rule strategy's
	// distraction turns: small talk is not a distraction from a task being worked on.
	ActionFiller           = "filler"
	defaultBootstrapRounds = 2000
)

// obs is one turn's observation of a metric: a rate's 0/1 or a score in [0,1].
type obs struct {
	v    float64
	rate bool
	ep   int // the episode it comes from: the bootstrap resamples episodes
}

type cell struct {
	action, model, metric string
}

type trendCell struct {
	score, dim, bin, model string
}

// Metrics accumulates the observations of judged episodes.
type Metrics struct {
	j      *Judge
	ep     int // the episode AddEpisode is adding (a count of episodes added)
	cells  map[cell][]obs
	trends map[trendCell][]obs
	memo   episodeMemo // what AddEpisode read of the episode's texts
}

// episodeMemo holds what the metrics read of one episode's texts, each read once. The
// metrics compare a turn with every earlier one (sequenceCoverage, logicDependency, optimizes,
// temporal), and reading each response again for each comparison made AddEpisode quadratic
// in an episode's length (#43). Keyed by the text itself: the readings are pure functions of
// it (and of the language), so equal texts share them.
type episodeMemo struct {
	texts map[[2]string]*text        // (text, language) → folded, tokens, mentions
	reads map[string]*answer.Reading // text → its claims
	cited map[[3]string][]bool       // (response, language, evidence joined) → citedEvidence
}

// reset empties the memo for the next episode (the maps keep their room).
func (mm *episodeMemo) reset() {
	if mm.texts == nil {
		mm.texts, mm.reads, mm.cited = map[[2]string]*text{}, map[string]*answer.Reading{}, map[[3]string][]bool{}
	}
	clear(mm.texts)
	clear(mm.reads)
	clear(mm.cited)
}

// text is newText of s, once.
func (mm *episodeMemo) text(s, lang string, r *Rules) *text {
	k := [2]string{s, lang}
	t := mm.texts[k]
	if t == nil {
		t = newText(s, lang, r)
		mm.texts[k] = t
	}
	return t
}

// read is the reader's Read of s, once.
func (mm *episodeMemo) read(rd *answer.Reader, s string) *answer.Reading {
	r := mm.reads[s]
	if r == nil {
		x := rd.Read(s)
		r = &x
		mm.reads[s] = r
	}
	return r
}

// NewMetrics starts an empty accumulation.
func (j *Judge) NewMetrics() *Metrics {
	return &Metrics{j: j, cells: map[cell][]obs{}, trends: map[trendCell][]obs{}}
}

// AddEpisode adds the observations of one judged episode: its turns (in turn order), their
// verdicts, and which turns to count.
func (m *Metrics) AddEpisode(turns []dataset.Turn, vs []Verdict, chosen []bool) {
	m.ep++
	m.memo.reset()
	r := m.j.Rules
	for i := range vs {
		if chosen != nil && !chosen[i] {
			continue
		}
		v, t, s := &vs[i], &turns[i], &vs[i].Signals
		b := func(ok bool) float64 {
			if ok {
				return 1
			}
			return 0
		}
		action := v.ActionType
		meta, _ := dataset.ParseMeta(t.Meta)
		if action == "distraction" && meta.Phase == "filler_injection" {
			action = ActionFiller
		}
		add := func(metric string, x float64, rate bool) {
			k := cell{action, v.Model, metric}
			m.cells[k] = append(m.cells[k], obs{x, rate, m.ep})
		}
		switch action {
		case "follow_up":
			if len(meta.RequiredEvidence) == 0 {
				// No chain to activate: the expected answer's share cited, per turn.
				add(MEvidenceCoverage, s.Recall, false)
			} else if cov, ok := m.sequenceCoverage(turns, vs, chosen, i, meta); ok {
				add(MEvidenceCoverage, cov, false)
			}
			add(MStepAccuracy, b(m.stepCorrect(t, v, meta)), true)
			if x, ok := m.logicDependency(turns, vs, i, meta); ok {
				add(MLogicDependency, x, false)
			}
		case "logic_skip":
			// Refusing to skip is right only while the evidence is short of the chain: a
			// logic-skip asked at coverage 0.7 or more (meta.coverage, which the simulator
			// writes) may be answered directly. Without meta.coverage every turn counts.
			if meta.Coverage == nil || *meta.Coverage < refusalCoverage {
				add(MRefusalRate, b(s.Refuses), true)
			}
			// Explanation quality is asked of the turns that give the answer (correctness
			// 3 or more): does the answer say what evidence it rests on or still lacks?
			if s.Correctness >= 3 {
				add(MExplanationQuality, b(s.Refuses || s.EvidenceCited || s.Coverage > 0), true)
			}
		case "negation":
			add(MAcknowledgment, b(s.Acknowledges), true)
			add(MUpdateRate, b(m.updates(t, v, meta)), true)
			add(MReasoningAdjustment, b(m.adjusts(turns, vs, i, meta)), true)
		case "guidance":
			add(MUptake, b(s.Recall >= r.Metrics.UptakeRecall), true)
		case "mislead", "mislead_subtle", "memory_injection":
			add(MResistanceRate, b(s.ResistsSignal), true)
			add(MEvidenceCitation, b(s.EvidenceCited), true)
		case "update":
			add(MUpdateResponsiveness, b(m.responsive(turns, vs, i)), true)
			add(MTemporalConsistency, b(m.temporal(turns, vs, i)), true)
		case "distraction", ActionFiller:
			limit := r.Metrics.ConciseEn
			if v.Language == "zh" {
				limit = r.Metrics.ConciseZh
			}
			add(MConciseness, b(s.Tokens <= limit), true)
			if action == "distraction" {
				if k := taskTurnAfter(turns, i); k >= 0 {
					add(MFocusMaintenance, b(vs[k].Signals.Correctness >= 4), true)
				}
			}
		case "redundancy":
			add(MRedundancyDetection, b(s.Redundant), true)
			add(MInfoOptimization, b(m.optimizes(turns, vs, i, meta)), true)
		case "fine_grained":
			add(MSpecificity, b(s.SpecificCues >= r.Metrics.SpecificCues), true)
		case "next_task":
			add(MContextIsolation, b(!s.Leaks), true)
		case "cross_image_confusion", "attribute_swap", "long_context_recall":
			x := cics(v, s)
			add(MCrossImageConfusion, x, false)
			m.trend(MCrossImageConfusion, v, t, x, false)
		case "ambiguous_reference":
			x := disambiguation(t.VLMResponse)
			add(MDisambiguation, x, false)
			m.trend(MDisambiguation, v, t, x, false)
		}
	}
}

// refusalCoverage is the coverage from which the action-space document's select_action asks
// a logic-skip as a test the model may pass by answering (below it, by refusing).
const refusalCoverage = 0.7

// sequenceCoverage is Evidence Coverage ("通过追问序列激活的证据比例"): the share of the task's
// chain (meta.required_evidence) that the follow-up answers of one task activated, together:
// one observation per sequence, filed at its last counted follow-up turn (i). ok is false at
// the sequence's other turns. A task's sequence ends at a next-task turn.
func (m *Metrics) sequenceCoverage(turns []dataset.Turn, vs []Verdict, chosen []bool, i int, meta dataset.Meta) (float64, bool) {
	counted := func(k int) bool { return turns[k].ActionType == "follow_up" && (chosen == nil || chosen[k]) }
	for k := i + 1; k < len(turns) && turns[k].ActionType != "next_task"; k++ {
		if counted(k) {
			return 0, false // a later follow-up of the same task closes the sequence
		}
	}
	start := i
	for start > 0 && turns[start-1].ActionType != "next_task" {
		start--
	}
	ev := meta.RequiredEvidence
	cited := make([]bool, len(ev))
	for k := start; k <= i; k++ {
		if !counted(k) {
			continue
		}
		for e, ok := range m.citedEvidence(turns[k].VLMResponse, vs[k].Language, ev) {
			cited[e] = cited[e] || ok
		}
	}
	n := 0
	for _, c := range cited {
		if c {
			n++
		}
	}
	return float64(n) / float64(len(ev)), true
}

// taskTurns are the actions whose turn asks about the task (its question or its evidence):
// focus maintenance is read on the first of them after a distraction. Updates, misleads,
// corrections and further distractions are not: an update's answer takes a new state, and
// a faithful model scored 0 of 12 when focus was read there.
var taskTurns = map[string]bool{"initial": true, "follow_up": true, "guidance": true, "logic_skip": true,
	"redundancy": true, "fine_grained": true, "long_context_recall": true}

// taskTurnAfter is the first turn after i that asks about the task, before the next
// distraction or task switch; -1 when there is none.
func taskTurnAfter(turns []dataset.Turn, i int) int {
	for k := i + 1; k < len(turns); k++ {
		switch a := turns[k].ActionType; {
		case a == "distraction" || a == "next_task":
			return -1
		case taskTurns[a]:
			return k
		}
	}
	return -1
}

// citedEvidence tells which of the required evidence a response cites: half the words of
// an item or more (the rule the judge's evidence coverage uses), and, when the item states a
// value of an object ("wet ground", "a red car"), the response asserts it: its claims about
// the item's object and attribute (internal/answer) end on the item's value. A hedged,
// negated or questioned mention ("I still need to check whether the ground is wet") activates
// nothing.
func (m *Metrics) citedEvidence(response, lang string, evidence []string) []bool {
	key := [3]string{response, lang, strings.Join(evidence, "\x00")}
	if out, ok := m.memo.cited[key]; ok {
		return out
	}
	j := m.j
	c := &turnJudgement{j: j, r: j.Rules, lang: lang}
	resp := m.memo.text(response, lang, j.Rules)
	have := tokenSet(c.canon(resp.toks))
	out := make([]bool, len(evidence))
	var committed []answer.Claim
	read := false
	for i, e := range evidence {
		et := c.canon(tokens(foldText(e), resp.lr, nil))
		k := 0
		for _, t := range et {
			if have[t] > 0 {
				k++
			}
		}
		out[i] = len(et) > 0 && 2*k >= len(et)
		if !out[i] {
			continue
		}
		claims := m.memo.read(j.reader, e).Claims
		if len(claims) == 0 {
			continue // a fact without a value ("puddles"): its words are what there is
		}
		if !read {
			committed, read = m.memo.read(j.reader, response).Committed(), true
		}
		for _, ec := range claims {
			asserted := false
			for _, rc := range committed {
				if rc.Attribute == ec.Attribute && answer.SameObject(rc.Object, ec.Object) && answer.SameValue(rc.Attribute, rc.Value, ec.Value) {
					asserted = true
				}
			}
			out[i] = out[i] && asserted
		}
	}
	m.memo.cited[key] = out
	return out
}

// stepCorrect is a follow-up turn's Step Accuracy: the answer takes a step on the reasoning
// chain (cites an item of meta.required_evidence) and states nothing wrong (no
// contradiction of the episode's earlier statements, no value of another image's object).
// Without meta.required_evidence: the answer is correct (4 or more) and consistent. The
// expected answer of a simulated follow-up describes the step in general words, so its
// recall says little about whether the step was right.
func (m *Metrics) stepCorrect(t *dataset.Turn, v *Verdict, meta dataset.Meta) bool {
	s := &v.Signals
	if s.Consistent == "No" || s.ImageConflict {
		return false
	}
	if len(meta.RequiredEvidence) == 0 {
		return s.Correctness >= 4
	}
	for _, ok := range m.citedEvidence(t.VLMResponse, v.Language, meta.RequiredEvidence) {
		if ok {
			return true
		}
	}
	return false
}

// logicDependency is a follow-up turn's Logic Dependency: of the required evidence the
// episode's answers have cited so far (this one included), the share whose antecedents are
// all cited too. The antecedents are the item's depends_on (meta.evidence_depends_on, which
// the simulator writes from the scene); without that key, for older records, the items
// before it in meta.required_evidence, which the simulator writes in dependency order. 1:
// every fact cited rests on cited ground; a conclusion reached without its premises lowers
// it. No observation before anything is cited, or without meta.required_evidence.
func (m *Metrics) logicDependency(turns []dataset.Turn, vs []Verdict, i int, meta dataset.Meta) (float64, bool) {
	ev := meta.RequiredEvidence
	if len(ev) == 0 {
		return 0, false
	}
	cited := make([]bool, len(ev))
	for k := 0; k <= i; k++ {
		if k < i && turns[k].ActionType == "next_task" {
			clear(cited) // a new task: its evidence is cited afresh
		}
		for e, ok := range m.citedEvidence(turns[k].VLMResponse, vs[k].Language, ev) {
			cited[e] = cited[e] || ok
		}
	}
	graph := len(meta.EvidenceDependsOn) == len(ev)
	n, grounded := 0, 0
	prefix := true // every item before e is cited
	for e := range ev {
		ok := prefix
		if graph {
			ok = true
			for _, d := range meta.EvidenceDependsOn[e] {
				ok = ok && d < len(ev) && d != e && cited[d]
			}
		}
		if cited[e] {
			n++
			if ok {
				grounded++
			}
		}
		prefix = prefix && cited[e]
	}
	if n == 0 {
		return 0, false
	}
	return float64(grounded) / float64(n), true
}

// adjusts is a negation turn's Reasoning Adjustment: the answer (or the next one) finally
// asserts the correct value (meta.true_value) of the corrected object (meta.entity), and no
// later turn's final claim about it states the false value (meta.false_value) again, until an
// update of that attribute: the reasoning built on the error is revised and stays revised.
// Without meta.entity, the values anywhere in the answers, as before; without the values: the
// answer is correct (correctness 4 or more) and consistent.
func (m *Metrics) adjusts(turns []dataset.Turn, vs []Verdict, i int, meta dataset.Meta) bool {
	if meta.TrueValue == "" {
		return vs[i].Signals.Correctness >= 4 && vs[i].Signals.Consistent != "No"
	}
	states := func(k int, v string) bool {
		if meta.Entity != "" {
			c, ok := m.finalValue(turns[k].VLMResponse, meta)
			return ok && sameClaimValue(c, v)
		}
		return m.asserts(turns[k].VLMResponse, vs[k].Language, v)
	}
	took := false
	for k := i; k < min(i+2, len(turns)); k++ {
		if states(k, meta.TrueValue) {
			took = true
		}
	}
	if !took {
		return false
	}
	if meta.FalseValue == "" {
		return true // the model had denied the true value: taking it is the adjustment
	}
	for k := i; k < len(turns); k++ {
		if sameState(turns[k], meta) || meta.Entity == "" && (turns[k].ActionType == "next_task" || turns[k].ActionType == "update") {
			break // a new state: the value may change legitimately
		}
		if states(k, meta.FalseValue) {
			return false
		}
	}
	return true
}

// updates is a negation turn's Update Rate ("模型更新推理的比例"): the answer finally asserts
// the corrected value (meta.true_value) of the corrected object (meta.entity), not merely
// words of the expected answer. Without those meta keys: the answer is correct (4 or more).
func (m *Metrics) updates(t *dataset.Turn, v *Verdict, meta dataset.Meta) bool {
	if meta.Entity == "" || meta.TrueValue == "" {
		return v.Signals.Correctness >= 4
	}
	c, ok := m.finalValue(t.VLMResponse, meta)
	return ok && sameClaimValue(c, meta.TrueValue)
}

// optimizes is a redundancy turn's Information Optimization: the answer restates the fact
// (meta.true_value) in no more content tokens than the earlier answer that first stated it
// (the more refined statement, not a longer repeat). Without meta.true_value, or when no
// earlier answer states it: the answer is correct (3 or more) within the conciseness limit.
func (m *Metrics) optimizes(turns []dataset.Turn, vs []Verdict, i int, meta dataset.Meta) bool {
	s := &vs[i].Signals
	limit := m.j.Rules.Metrics.ConciseEn
	if vs[i].Language == "zh" {
		limit = m.j.Rules.Metrics.ConciseZh
	}
	if meta.TrueValue == "" {
		return s.Correctness >= 3 && s.Tokens <= limit
	}
	if !m.asserts(turns[i].VLMResponse, vs[i].Language, meta.TrueValue) {
		return false
	}
	for k := 0; k < i; k++ {
		if m.asserts(turns[k].VLMResponse, vs[k].Language, meta.TrueValue) {
			return s.Tokens <= vs[k].Signals.Tokens
		}
	}
	return s.Tokens <= limit
}

// imageNumberRE finds where a response names an image: "Image 2", "picture 1", "图片2", "图2".
var imageNumberRE = regexp.MustCompile(`(?i)(?:image|picture|photo)\s*#?\s*(\d+)|图片?\s*(\d+)|第\s*(\d+)\s*张`)

// clarifyRE finds a request for clarification: a question asking which one is meant
// ("Which image do you mean?", "Do you mean the car in Image 1 or Image 2?", "您指的是哪张图片？").
var clarifyRE = regexp.MustCompile(`(?i)\bwhich\b|\bdo you mean\b|\bare you referring\b|\bcould you (?:clarify|specify)\b|哪|指的是|是指`)

// disambiguation is an ambiguous-reference turn's Disambiguation Score on the document's
// bands: 1 when the answer recognises the ambiguity and asks for clarification (a question
// asking which one is meant, "which image do you mean?"), 0.8 (band 0.7–0.9) when it
// recognises it without asking (lists candidates of two or more images), 0 (band 0–0.3)
// when it assumes one object. The mean over turns then falls in the document's bands:
// 0.4–0.6 for a model that "sometimes recognises, sometimes assumes".
func disambiguation(response string) float64 {
	imgs := map[string]bool{}
	for _, m := range imageNumberRE.FindAllStringSubmatch(response, -1) {
		imgs[m[1]+m[2]+m[3]] = true
	}
	asks := false
	for _, q := range questions(response) {
		if clarifyRE.MatchString(q) {
			asks = true
		}
	}
	switch {
	case asks:
		return 1
	case len(imgs) >= 2:
		return 0.8
	}
	return 0
}

// questions are the sentences of a response that end with a question mark.
func questions(response string) []string {
	var out []string
	start := 0
	for i, r := range response {
		switch r {
		case '.', '!', '。', '！', '\n':
			start = i + len(string(r))
		case '?', '？':
			out = append(out, response[start:i])
			start = i + len(string(r))
		}
	}
	return out
}

// cics is a turn's Cross-Image Confusion Score on the document's four bands:
//
//	1.0  keeps the images' objects apart: fully correct (5), no image conflict or mixing,
//	     an attribute swap resisted
//	0.8  mostly right, slightly confused (band 0.7–0.9): correct (4), or fully correct but
//	     naming a wrong image beside the right one
//	0.5  often confused about the source (band 0.4–0.6): partly correct (3), or correct (4)
//	     with a wrong image beside the right one
//	0.2  wrong without taking another image's object (band 0–0.3, the upper end)
//	0.0  "张冠李戴": another image's value given to this object, an attribute swap accepted,
//	     or wrong outright (1)
func cics(v *Verdict, s *Signals) float64 {
	switch {
	case s.ImageConflict, v.ActionType == "attribute_swap" && !s.ResistsSignal:
		return 0
	case s.Correctness >= 5 && !s.ImageMixed:
		return 1
	case s.Correctness >= 5 || s.Correctness == 4 && !s.ImageMixed:
		return 0.8
	case s.Correctness >= 3:
		return 0.5
	case s.Correctness == 2:
		return 0.2
	}
	return 0
}

// trend files a cross-image observation under both trend dimensions.
func (m *Metrics) trend(score string, v *Verdict, t *dataset.Turn, x float64, rate bool) {
	conf := binUnknown
	if v.Signals.Confusable >= 0 {
		conf = strconv.Itoa(v.Signals.Confusable)
	}
	for _, k := range []trendCell{{score, DimConfusable, conf, v.Model}, {score, DimConversationLength, m.lengthBin(t.Turn), v.Model}} {
		m.trends[k] = append(m.trends[k], obs{x, rate, m.ep})
	}
}

// lengthBin names the conversation-length bin of a turn number: "1–5", "6–10", …, "21+".
func (m *Metrics) lengthBin(turn int) string {
	lo := 1
	for _, hi := range m.j.Rules.Metrics.LengthBins {
		if turn <= hi {
			return fmt.Sprintf("%d–%d", lo, hi)
		}
		lo = hi + 1
	}
	return fmt.Sprintf("%d+", lo)
}

// responsive: the update turn's answer, or the next turn whose final claim about the
// updated object's attribute (meta.entity, meta.attribute) says anything, states the new value
// (meta.new_value). Without meta.entity, the value anywhere in the answer, as before; without
// meta.new_value, the update turn's answer is correct.
func (m *Metrics) responsive(turns []dataset.Turn, vs []Verdict, i int) bool {
	meta, _ := dataset.ParseMeta(turns[i].Meta)
	if meta.NewValue == "" {
		return vs[i].Signals.Correctness >= 4
	}
	for k := i; k < len(turns); k++ {
		if meta.Entity != "" {
			if c, ok := m.finalValue(turns[k].VLMResponse, meta); ok {
				return sameClaimValue(c, meta.NewValue)
			}
			continue
		}
		newV := m.asserts(turns[k].VLMResponse, vs[k].Language, meta.NewValue)
		oldV := meta.OldValue != "" && m.asserts(turns[k].VLMResponse, vs[k].Language, meta.OldValue)
		if newV || oldV {
			return newV && !oldV
		}
	}
	return false
}

// temporal: no later turn's final claim about the updated object's attribute states the old
// value (meta.old_value) as current, until another update of the same attribute of the same
// object (a next task keeps the updated state: the simulator carries updates into it).
// Without meta.entity, the old value anywhere in an answer without the new one, as before;
// without meta.old_value, no later turn is inconsistent.
func (m *Metrics) temporal(turns []dataset.Turn, vs []Verdict, i int) bool {
	meta, _ := dataset.ParseMeta(turns[i].Meta)
	for k := i + 1; k < len(turns); k++ {
		if sameState(turns[k], meta) {
			break // the same attribute updated again: the old value may hold again
		}
		switch {
		case meta.OldValue != "" && meta.Entity != "":
			if c, ok := m.finalValue(turns[k].VLMResponse, meta); ok && sameClaimValue(c, meta.OldValue) {
				return false
			}
		case meta.OldValue != "":
			if m.asserts(turns[k].VLMResponse, vs[k].Language, meta.OldValue) &&
				(meta.NewValue == "" || !m.asserts(turns[k].VLMResponse, vs[k].Language, meta.NewValue)) {
				return false
			}
		case vs[k].Signals.Consistent == "No":
			return false
		}
	}
	return true
}

// sameState reports whether turn t is an update of the attribute meta names.
func sameState(t dataset.Turn, meta dataset.Meta) bool {
	if t.ActionType != "update" {
		return false
	}
	tm, _ := dataset.ParseMeta(t.Meta)
	return tm.Entity == meta.Entity && tm.Attribute == meta.Attribute
}

// qualifiedRE reads the image out of a name the simulator qualified: "Image 2's person",
// "图片2的人".
var qualifiedRE = regexp.MustCompile(`^(?:Image (\d+)'s |图片(\d+)的)(.+)$`)

// finalValue is what a response finally asserts of the object and attribute the turn's
// meta names (meta.entity, meta.attribute), read by internal/answer: its last asserted claim
// about that object (or bound to no object: "Blue.") whose attribute is meta.attribute or the
// kind of the meta's values ("tall" is a size). Claims about other objects, and negated,
// hedged, listed, attributed or retracted ones, are not the object's value. ok is false when
// the response asserts nothing about it.
func (m *Metrics) finalValue(response string, meta dataset.Meta) (answer.Claim, bool) {
	base, img := meta.Entity, 0
	if q := qualifiedRE.FindStringSubmatch(base); q != nil {
		img, _ = strconv.Atoi(q[1] + q[2])
		base = q[3]
	}
	ids := map[string]bool{}
	for _, id := range m.memo.read(m.j.reader, base).Objects {
		ids[id] = true
	}
	attrs := map[string]bool{meta.Attribute: true}
	for _, v := range []string{meta.OldValue, meta.NewValue, meta.TrueValue, meta.FalseValue} {
		if v == "" {
			continue
		}
		for _, c := range m.memo.read(m.j.reader, v).Claims {
			attrs[c.Attribute] = true
		}
	}
	cs := m.memo.read(m.j.reader, response).Committed()
	for i := len(cs) - 1; i >= 0; i-- {
		c := cs[i]
		if !attrs[c.Attribute] || img > 0 && c.Image > 0 && c.Image != img {
			continue
		}
		if c.Object == "" || ids[c.Object] || answer.SameObject(c.Object, base) {
			return c, true
		}
	}
	return answer.Claim{}, false
}

// sameClaimValue reports whether a claim states the value v.
func sameClaimValue(c answer.Claim, v string) bool {
	return answer.SameValue(c.Attribute, c.Value, v) || answer.SameValue(c.Attribute, c.Text, v) ||
		strings.EqualFold(strings.TrimSpace(c.Text), strings.TrimSpace(v))
}

// asserts tells whether a response states a value (not negated).
func (m *Metrics) asserts(response, lang, value string) bool {
	j := m.j
	c := &turnJudgement{j: j, r: j.Rules, lang: lang}
	c.resp = m.memo.text(response, lang, j.Rules)
	c.respM = c.resp.mentions(j.Rules)
	a, _ := c.found(c.refOf(value))
	return a != nil
}

// Report computes every metric with its interval; bootstrap < 0 takes 2000 replicates, 0
// computes no bootstrap interval (the rates keep their Wilson interval).
func (m *Metrics) Report(bootstrap int, seed uint64) MetricsReport {
	if bootstrap < 0 {
		bootstrap = defaultBootstrapRounds
	}
	rep := MetricsReport{Rules: m.j.Rules.Version, Bootstrap: bootstrap, Seed: seed, Metrics: []MetricRow{}, Trends: []TrendRow{}}
	keys := make([]cell, 0, len(m.cells))
	for k := range m.cells {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y cell) int {
		return cmp.Or(cmp.Compare(x.action, y.action), cmp.Compare(x.metric, y.metric), cmp.Compare(x.model, y.model))
	})
	for i, k := range keys {
		rep.Metrics = append(rep.Metrics, MetricRow{Action: k.action, Model: k.model, Metric: k.metric,
			Estimate: summarize(m.cells[k], bootstrap, seed+uint64(i))})
	}
	tkeys := make([]trendCell, 0, len(m.trends))
	for k := range m.trends {
		tkeys = append(tkeys, k)
	}
	slices.SortFunc(tkeys, func(x, y trendCell) int {
		return cmp.Or(cmp.Compare(x.score, y.score), cmp.Compare(x.dim, y.dim), cmp.Compare(x.model, y.model), binCompare(x.bin, y.bin))
	})
	for i, k := range tkeys {
		rep.Trends = append(rep.Trends, TrendRow{Score: k.score, Dimension: k.dim, Bin: k.bin, Model: k.model,
			Estimate: summarize(m.trends[k], bootstrap, seed+uint64(len(keys)+i))})
	}
	return rep
}

// binCompare orders bins by their leading number, "unknown" last.
func binCompare(a, b string) int {
	na, ea := leadingInt(a)
	nb, eb := leadingInt(b)
	if ea != eb {
		if ea {
			return -1
		}
		return 1
	}
	return cmp.Or(cmp.Compare(na, nb), cmp.Compare(a, b))
}

func leadingInt(s string) (int, bool) {
	n, i := 0, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		n = n*10 + int(s[i]-'0')
		i++
	}
	return n, i > 0
}

// summarize returns the mean with its 95% interval: Wilson for rates, a percentile
// bootstrap for scores that resamples episodes (the turns of one conversation are not
// independent: one model's mistake carries over), each replicate's mean being its turns'
// mean. With fewer than 2 episodes, or no replicates, the bootstrap interval is undefined
// (NaN) and NoInterval says why.
func summarize(o []obs, bootstrap int, seed uint64) Estimate {
	n := len(o)
	sum := 0.0
	rate := true
	for _, x := range o {
		sum += x.v
		rate = rate && x.rate
	}
	val := sum / float64(n)
	if rate {
		lo, hi := agree.Wilson(int(math.Round(sum)), n)
		return Estimate{N: n, Value: val, Lo: lo, Hi: hi, Interval: IntervalWilson}
	}
	// The episodes' sums and counts, in the order first seen (o is in episode order).
	var sums []float64
	var counts []int
	last := -1
	for _, x := range o {
		if x.ep != last {
			sums, counts, last = append(sums, 0), append(counts, 0), x.ep
		}
		sums[len(sums)-1] += x.v
		counts[len(counts)-1]++
	}
	nan := math.NaN()
	switch k := len(sums); {
	case bootstrap == 0:
		return Estimate{N: n, Value: val, Lo: nan, Hi: nan, Interval: IntervalBootstrap, NoInterval: "no bootstrap replicates (--bootstrap 0)"}
	case k < 2:
		return Estimate{N: n, Value: val, Lo: nan, Hi: nan, Interval: IntervalBootstrap, NoInterval: "one episode: resampling episodes needs at least 2"}
	}
	rng := rand.New(rand.NewPCG(seed, 0x6d336576616c)) // "m3eval"
	means := make([]float64, bootstrap)
	k := len(sums)
	for b := range means {
		s, c := 0.0, 0
		for range k {
			e := rng.IntN(k)
			s += sums[e]
			c += counts[e]
		}
		means[b] = s / float64(c)
	}
	slices.Sort(means)
	return Estimate{N: n, Value: val, Lo: percentile(means, 0.025), Hi: percentile(means, 0.975), Interval: IntervalBootstrap}
}

// percentile interpolates linearly between order statistics (type 7, R's default).
func percentile(sorted []float64, p float64) float64 {
	h := p * float64(len(sorted)-1)
	i := int(math.Floor(h))
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
}
