package simulate

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/m3bench/m3eval/internal/dataset"
)

// Phase is the simulator phase a turn belongs to (meta.phase).
type Phase string

// The phases of the rule strategy and of the cross-image test.
const (
	PhaseMemoryBuild        Phase = "memory_build"
	PhaseStateEvolve        Phase = "state_evolve"
	PhaseReasoningTest      Phase = "reasoning_test"
	PhaseGrounding          Phase = "grounding"
	PhaseFillerInjection    Phase = "filler_injection"
	PhaseAmbiguousReference Phase = "ambiguous_reference"
	PhaseAttributeSwap      Phase = "attribute_swap"
	PhaseLongContextRecall  Phase = "long_context_recall"
)

// Meta is a simulated turn's meta object: exactly the keys of the turn meta contract, as
// dataset.Meta reads them (that type carries no JSON names to write with; TestMetaContract
// checks that every meta written here reads back through dataset.ParseMeta unchanged).
type Meta struct {
	Language          Language       `json:"language"`
	Phase             Phase          `json:"phase"`
	Entity            string         `json:"entity,omitempty"`
	Attribute         string         `json:"attribute,omitempty"`
	FalseValue        string         `json:"false_value,omitempty"`
	TrueValue         string         `json:"true_value,omitempty"`
	OldValue          string         `json:"old_value,omitempty"`
	NewValue          string         `json:"new_value,omitempty"`
	RequiredEvidence  []string       `json:"required_evidence,omitempty"`
	ObjectsPerImage   [][]MetaObject `json:"objects_per_image,omitempty"`
	Ambiguous         *bool          `json:"ambiguous,omitempty"`
	TargetImage       int            `json:"target_image,omitempty"`
	ConfusableObjects *int           `json:"confusable_objects,omitempty"`
	Coverage          *float64       `json:"coverage,omitempty"`
}

// MetaObject is an object as meta.objects_per_image lists it: the shared type the judge
// reads.
type MetaObject = dataset.MetaObject

// Step is one user turn a strategy chose: what to send and what a good answer holds.
type Step struct {
	Action   Action
	Phase    Phase
	Text     string
	Expected string
	Meta     Meta
}

// planner chooses the user turns of one episode.
type planner interface {
	// next returns the next user turn given the answer to the previous one ("" before the
	// first); ok is false when the episode is over.
	next(answer string) (s Step, ok bool)
	// planned is how many turns the episode will have.
	planned() int
}

// rules is the document's rule-based action strategy over three phases:
//
//   - memory build (turn 1 opens with "what is in the image?"): negation when the last answer
//     gave a known object a wrong attribute value; otherwise by evidence coverage, guidance
//     below 0.3, follow-up below 0.7, logic-skip from 0.7. The phase ends after its
//     logic-skip test or when its turns (half of those before the reasoning test, rounded
//     up) are used.
//   - state evolution: update, mislead, redundancy, distraction, in turn, from the phase's
//     first turn (the document's turn % 4, counted from the phase start so that the state
//     changes before it is questioned).
//   - reasoning test: the task's question, directly (the last turn, or the last tenth).
//
// The document's fine-grained and next-task actions have templates but the algorithm never
// selects them; neither does this strategy.
type rules struct {
	sc       *Scene
	k        *knowledge
	rng      *rand.Rand
	lang     Language
	turns    int
	turn     int // turns given so far
	memEnd   int // last turn of memory build
	reason   int // first turn of the reasoning test
	phase    Phase
	evolveAt int // turn the state evolution began
	// lastErrors are the wrong values of the latest answer.
	lastErrors []wrongValue
	updates    int // scene updates used
	required   []string
}

func newRules(sc *Scene, turns int, rng *rand.Rand) *rules {
	r := &rules{sc: sc, k: newKnowledge(sc), rng: rng, lang: sc.Language, turns: turns, phase: PhaseMemoryBuild}
	nReason := max(1, turns/10)
	r.reason = turns - nReason + 1
	r.memEnd = max(1, r.reason/2) // half of the turns before the test, rounded up
	for _, ev := range sc.Task.RequiredEvidence {
		r.required = append(r.required, ev.Text)
	}
	return r
}

func (r *rules) planned() int { return r.turns }

func (r *rules) next(answer string) (Step, bool) {
	if r.turn >= r.turns {
		return Step{}, false
	}
	if r.turn > 0 {
		ob := r.k.observe(answer, r.turn)
		r.lastErrors = ob.errors
	}
	r.turn++
	cov := r.k.coverage()
	var s Step
	switch {
	case r.turn == 1:
		s = r.opening()
	case r.turn >= r.reason:
		r.phase = PhaseReasoningTest
		s = r.direct()
	case r.phase == PhaseMemoryBuild && r.turn <= r.memEnd:
		s = r.memoryBuild(cov)
		if s.Action == ActLogicSkip {
			r.memEnd = r.turn // the phase's test is asked: state evolution next
		}
	default:
		if r.phase != PhaseStateEvolve {
			r.phase, r.evolveAt = PhaseStateEvolve, r.turn
		}
		s = r.stateEvolve((r.turn - r.evolveAt) % 4)
	}
	s.Phase = r.phase
	s.Meta.Language, s.Meta.Phase = r.lang, r.phase
	s.Meta.Coverage = &cov
	if s.Meta.RequiredEvidence == nil {
		s.Meta.RequiredEvidence = r.required
	}
	return s, true
}

func (r *rules) slots() map[string]string { return make(map[string]string, 8) }

func (r *rules) opening() Step {
	sl := r.slots()
	key := tplOpening
	if n := len(r.sc.Images); n > 1 {
		key, sl["n"] = tplOpeningMulti, fmt.Sprint(n)
	}
	text, _ := render(r.rng, key, r.lang, sl)
	return Step{Action: ActInitial, Text: text, Expected: r.describeAll()}
}

func (r *rules) direct() Step {
	text, _ := render(r.rng, tplDirect, r.lang, map[string]string{"question": r.sc.Task.Question})
	return Step{Action: ActInitial, Text: text, Expected: r.sc.Task.Answer}
}

// memoryBuild chooses by the last answer's errors and the coverage.
func (r *rules) memoryBuild(cov float64) Step {
	if len(r.lastErrors) > 0 {
		return r.negation(r.lastErrors[r.rng.IntN(len(r.lastErrors))])
	}
	switch {
	case cov < 0.3:
		return r.guidance()
	case cov < 0.7:
		if s, ok := r.followUp(); ok {
			return s
		}
		return r.guidance()
	default:
		return r.logicSkip()
	}
}

func (r *rules) stateEvolve(k int) Step {
	switch k {
	case 0:
		if s, ok := r.update(); ok {
			return s
		}
		fallthrough
	case 1:
		if s, ok := r.mislead(); ok {
			return s
		}
		fallthrough
	case 2:
		if s, ok := r.redundancy(); ok {
			return s
		}
		fallthrough
	default:
		return r.distraction()
	}
}

// name is how the turn names an object: qualified by its image when another image has an
// object of the same name.
func (r *rules) name(oi int) string { return r.k.names[oi] }

// imageOf is the object's image for meta.target_image (1-based) in a scene of several
// images; 0 (not written) in a one-image scene.
func (r *rules) imageOf(oi int) int {
	if oi < 0 || len(r.sc.Images) < 2 {
		return 0
	}
	return r.k.image[oi] + 1
}

func (r *rules) negation(w wrongValue) Step {
	sl := r.slots()
	sl["entity"], sl["attribute"] = r.name(w.obj), attributeName(w.attr, r.lang)
	sl["correct_value"], sl["wrong_value"] = w.correct, w.said
	text, _ := render(r.rng, templateKey(ActNegation), r.lang, sl)
	return Step{Action: ActNegation, Text: text,
		Expected: pick(r.lang,
			fmt.Sprintf("Accepts the correction: the %s's %s is %s, not %s, and revises its reasoning.", sl["entity"], sl["attribute"], w.correct, w.said),
			fmt.Sprintf("接受纠正：%s的%s是%s，不是%s，并据此修正推理。", sl["entity"], sl["attribute"], w.correct, w.said)),
		Meta: Meta{Entity: sl["entity"], Attribute: w.attr, FalseValue: w.said, TrueValue: w.correct, TargetImage: r.imageOf(w.obj)}}
}

func (r *rules) guidance() Step {
	ei := r.k.nextByDependency()
	if ei < 0 {
		return r.logicSkip()
	}
	st := &r.k.evidence[ei]
	sl := r.slots()
	sl["entity"] = r.name(st.obj)
	sl["region"] = st.ev.Region
	if sl["region"] == "" {
		sl["region"] = r.k.cur[st.obj]["position"]
	}
	if st.ev.Attribute != "" {
		sl["attribute"] = attributeName(st.ev.Attribute, r.lang)
		sl["perspective"] = sl["attribute"]
	}
	text, _ := render(r.rng, templateKey(ActGuidance), r.lang, sl)
	return Step{Action: ActGuidance, Text: text,
		Expected: pick(r.lang, "Looks where directed and reports: "+st.ev.Text+".", "按提示观察并指出："+st.ev.Text+"。"),
		Meta:     Meta{Entity: sl["entity"], Attribute: st.ev.Attribute, TrueValue: r.evidenceValue(st), TargetImage: r.imageOf(st.obj)}}
}

func (r *rules) evidenceValue(st *evidenceState) string {
	if st.ev.Value != "" {
		return st.ev.Value
	}
	if st.ev.Attribute != "" {
		return r.k.cur[st.obj][st.ev.Attribute]
	}
	return ""
}

// followUp asks about the entity the model last talked about, toward the next missing
// evidence of the reasoning chain.
func (r *rules) followUp() (Step, bool) {
	e := r.k.lastEntity
	ti := r.k.nextByDependency()
	if e < 0 || ti < 0 {
		return Step{}, false
	}
	target := &r.k.evidence[ti]
	sl := r.slots()
	sl["entity"], sl["target"] = r.name(e), target.ev.Text
	for _, a := range slices.Sorted(maps.Keys(r.k.cur[e])) {
		if a != "position" {
			sl["description"] = r.k.cur[e][a]
			break
		}
	}
	text, _ := render(r.rng, templateKey(ActFollowUp), r.lang, sl)
	return Step{Action: ActFollowUp, Text: text,
		Expected: pick(r.lang, "Extends the reasoning from the "+sl["entity"]+" with image evidence: "+target.ev.Text+".",
			"从"+sl["entity"]+"出发，用图像证据推进推理："+target.ev.Text+"。"),
		Meta: Meta{Entity: sl["entity"], TargetImage: r.imageOf(e)}}, true
}

func (r *rules) logicSkip() Step {
	text, _ := render(r.rng, templateKey(ActLogicSkip), r.lang, nil)
	var miss []string
	for _, i := range r.k.missing() {
		miss = append(miss, r.k.evidence[i].ev.Text)
	}
	exp := pick(r.lang, "Does not skip the reasoning: answers ("+r.sc.Task.Answer+") only with the evidence behind it",
		"不跳过推理：给出答案（"+r.sc.Task.Answer+"）时说明依据")
	if len(miss) > 0 {
		exp += pick(r.lang, ", or names the evidence still missing: "+strings.Join(miss, "; ")+".", "，或指出仍缺少的证据："+strings.Join(miss, "；")+"。")
	} else {
		exp += pick(r.lang, ".", "。")
	}
	return Step{Action: ActLogicSkip, Text: text, Expected: exp}
}

// update announces a state change: the scene's next update, or a new value the simulator
// picks; the knowledge takes the new value.
func (r *rules) update() (Step, bool) {
	oi, attr, nv := -1, "", ""
	if r.updates < len(r.sc.Updates) {
		u := r.sc.Updates[r.updates]
		r.updates++
		oi, attr, nv = r.k.index(u.Entity), u.Attribute, u.NewValue
	} else {
		oi, attr = r.randomFact()
		if oi < 0 {
			return Step{}, false
		}
		nv = wrongValueFor(r.k, oi, attr, r.rng)
		if nv == "" {
			return Step{}, false
		}
	}
	old := r.k.cur[oi][attr]
	r.k.cur[oi][attr] = nv
	sl := r.slots()
	sl["entity"], sl["attribute"], sl["old_value"], sl["new_value"] = r.name(oi), attributeName(attr, r.lang), old, nv
	text, _ := render(r.rng, templateKey(ActUpdate), r.lang, sl)
	return Step{Action: ActUpdate, Text: text,
		Expected: pick(r.lang, fmt.Sprintf("Takes the change: the %s's %s is now %s (no longer %s).", sl["entity"], sl["attribute"], nv, old),
			fmt.Sprintf("接受变化：%s的%s现在是%s（不再是%s）。", sl["entity"], sl["attribute"], nv, old)),
		Meta: Meta{Entity: sl["entity"], Attribute: attr, OldValue: old, NewValue: nv, TrueValue: nv, TargetImage: r.imageOf(oi)}}, true
}

// mislead claims a false value for a checkable attribute.
func (r *rules) mislead() (Step, bool) {
	oi, attr := r.randomFact()
	if oi < 0 {
		return Step{}, false
	}
	wrong := wrongValueFor(r.k, oi, attr, r.rng)
	if wrong == "" {
		return Step{}, false
	}
	truth := r.k.cur[oi][attr]
	sl := r.slots()
	sl["entity"], sl["wrong_value"] = r.name(oi), wrong
	text, _ := render(r.rng, templateKey(ActMislead), r.lang, sl)
	return Step{Action: ActMislead, Text: text,
		Expected: pick(r.lang, fmt.Sprintf("No: the image shows the %s is %s, not %s.", sl["entity"], truth, wrong),
			fmt.Sprintf("不对：图中%s是%s，不是%s。", sl["entity"], truth, wrong)),
		Meta: Meta{Entity: sl["entity"], Attribute: attr, FalseValue: wrong, TrueValue: truth, TargetImage: r.imageOf(oi)}}, true
}

// redundancy asks again about evidence the model already gave.
func (r *rules) redundancy() (Step, bool) {
	var pool []int
	for i := range r.k.evidence {
		if r.k.evidence[i].turn != 0 {
			pool = append(pool, i)
		}
	}
	sl := r.slots()
	var oi int
	var attr, val string
	if len(pool) > 0 {
		st := &r.k.evidence[pool[r.rng.IntN(len(pool))]]
		oi, attr, val = st.obj, st.ev.Attribute, r.evidenceValue(st)
		sl["statement"] = st.statement
	} else {
		oi, attr = r.randomFact()
		if oi < 0 {
			return Step{}, false
		}
		val = r.k.cur[oi][attr]
	}
	sl["entity"], sl["value"] = r.name(oi), val
	if attr != "" {
		sl["attribute"] = attributeName(attr, r.lang)
	}
	text, ok := render(r.rng, templateKey(ActRedundancy), r.lang, sl)
	if !ok {
		return Step{}, false
	}
	fact := sl["statement"]
	if fact == "" || val != "" {
		fact = pick(r.lang, "the "+sl["entity"]+" is "+val, sl["entity"]+"是"+val)
	}
	return Step{Action: ActRedundancy, Text: text,
		Expected: pick(r.lang, "Confirms briefly, without repeating itself at length: "+fact+".", "简洁确认，不冗长重复："+fact+"。"),
		Meta:     Meta{Entity: sl["entity"], Attribute: attr, TrueValue: val, TargetImage: r.imageOf(oi)}}, true
}

// distraction asks about an object the task does not need.
func (r *rules) distraction() Step {
	need := map[int]bool{}
	for _, st := range r.k.evidence {
		need[st.obj] = true
	}
	var pool []int
	for i := range r.k.objs {
		if !need[i] {
			pool = append(pool, i)
		}
	}
	if len(pool) == 0 {
		for i := range r.k.objs {
			pool = append(pool, i)
		}
	}
	oi := pool[r.rng.IntN(len(pool))]
	sl := r.slots()
	sl["irrelevant_entity"] = r.name(oi)
	sl["irrelevant_question"], _ = render(r.rng, tplIrrelevantQ, r.lang, sl)
	text, _ := render(r.rng, templateKey(ActDistraction), r.lang, sl)
	return Step{Action: ActDistraction, Text: text,
		Expected: pick(r.lang, "Answers briefly ("+r.describe(oi)+") and stays on the task.", "简短回答（"+r.describe(oi)+"），并回到主任务。"),
		Meta:     Meta{Entity: sl["irrelevant_entity"], TargetImage: r.imageOf(oi)}}
}

// randomFact picks an object and one of its attributes: a color when the scene has one,
// else any attribute but position (a poor thing to mislead about).
func (r *rules) randomFact() (int, string) {
	var cands, colored [][2]int
	var attrs [][]string
	for i := range r.k.objs {
		keys := slices.Sorted(maps.Keys(r.k.cur[i]))
		attrs = append(attrs, keys)
		for j, a := range keys {
			if a != "position" {
				cands = append(cands, [2]int{i, j})
			}
			if a == "color" {
				colored = append(colored, [2]int{i, j})
			}
		}
	}
	// Colors first: a false color is a claim the image plainly settles.
	if len(colored) > 0 {
		cands = colored
	}
	if len(cands) == 0 {
		return -1, ""
	}
	c := cands[r.rng.IntN(len(cands))]
	return c[0], attrs[c[0]][c[1]]
}

func (r *rules) describe(oi int) string {
	d := describeObject(r.k, oi, r.lang)
	if q := r.k.names[oi]; q != displayName(r.k.objs[oi], r.lang) {
		d = q + strings.TrimPrefix(d, displayName(r.k.objs[oi], r.lang))
	}
	return d
}

func (r *rules) describeAll() string {
	var parts []string
	for i := range r.k.objs {
		parts = append(parts, r.describe(i))
	}
	return strings.Join(parts, pick(r.lang, "; ", "；"))
}

// describeObject writes an object and its current attributes: "umbrella (color: black)".
func describeObject(k *knowledge, oi int, lang Language) string {
	o := k.objs[oi]
	var attrs []string
	for _, a := range slices.Sorted(maps.Keys(k.cur[oi])) {
		attrs = append(attrs, attributeName(a, lang)+pick(lang, ": ", "：")+k.cur[oi][a])
	}
	name := displayName(o, lang)
	if len(attrs) == 0 {
		return name
	}
	return name + pick(lang, " (", "（") + strings.Join(attrs, pick(lang, ", ", "，")) + pick(lang, ")", "）")
}

// wrongValueFor picks a value of the attribute that the object does not have: another
// color, another object's value, or the opposite.
func wrongValueFor(k *knowledge, oi int, attr string, rng *rand.Rand) string {
	cur := k.cur[oi][attr]
	cc := canonical(cur)
	if colorKey(cur) != "" || attr == "color" {
		var cands []string
		for _, c := range colors {
			if c.key != cc {
				cands = append(cands, pick(k.lang, c.en[0], c.zh[0]))
			}
		}
		return cands[rng.IntN(len(cands))]
	}
	var cands []string
	for i := range k.objs {
		if v, ok := k.cur[i][attr]; ok && canonical(v) != cc && !slices.Contains(cands, v) {
			cands = append(cands, v)
		}
	}
	if len(cands) > 0 {
		return cands[rng.IntN(len(cands))]
	}
	if o, ok := opposites[strings.ToLower(cur)]; ok {
		return o
	}
	return ""
}
