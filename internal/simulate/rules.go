package simulate

import (
	"crypto/sha256"
	"encoding/hex"
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
	PhaseNextTask           Phase = "next_task"
)

// Meta is a simulated turn's meta object: exactly the keys of the turn meta contract, as
// dataset.Meta reads them (that type carries no JSON names to write with; TestMetaContract
// checks that every meta written here reads back through dataset.ParseMeta unchanged).
type Meta struct {
	Language         Language `json:"language"`
	Phase            Phase    `json:"phase"`
	Entity           string   `json:"entity,omitempty"`
	Attribute        string   `json:"attribute,omitempty"`
	FalseValue       string   `json:"false_value,omitempty"`
	TrueValue        string   `json:"true_value,omitempty"`
	OldValue         string   `json:"old_value,omitempty"`
	NewValue         string   `json:"new_value,omitempty"`
	RequiredEvidence []string `json:"required_evidence,omitempty"`
	// EvidenceDependsOn is the chain's graph: for each item of RequiredEvidence, the indices
	// of the items it depends on (the judge's Logic Dependency follows it, not list order).
	EvidenceDependsOn [][]int        `json:"evidence_depends_on,omitempty"`
	ObjectsPerImage   [][]MetaObject `json:"objects_per_image,omitempty"`
	Ambiguous         *bool          `json:"ambiguous,omitempty"`
	TargetImage       int            `json:"target_image,omitempty"`
	ConfusableObjects *int           `json:"confusable_objects,omitempty"`
	Coverage          *float64       `json:"coverage,omitempty"`
	// Sampling is what the run asked of the model besides the conversation (a key outside
	// the contract's typed ones: the judge keeps it and does not read it).
	Sampling *Sampling `json:"sampling,omitempty"`
	// Truncated marks a turn whose answer the server cut at the token limit
	// (finish_reason "length"): vlm_response is not the whole answer.
	Truncated bool `json:"truncated,omitempty"`
}

// Sampling is a run's system prompt and sampling parameters, as each turn's meta.sampling
// and the journal header record them, so that runs can be reproduced and compared. Unset
// parameters (the server's defaults) are left out.
type Sampling struct {
	// System is the system prompt; meta records its digest (SystemSHA256), the journal
	// header the text too.
	System       string   `json:"system,omitempty"`
	SystemSHA256 string   `json:"system_sha256,omitempty"`
	Temperature  *float64 `json:"temperature,omitempty"`
	TopP         *float64 `json:"top_p,omitempty"`
	MaxTokens    int      `json:"max_tokens,omitempty"`
	Seed         *int64   `json:"seed,omitempty"`
}

// IsZero reports whether nothing is set.
func (s *Sampling) IsZero() bool {
	return s == nil || (s.System == "" && s.Temperature == nil && s.TopP == nil && s.MaxTokens == 0 && s.Seed == nil)
}

// forMeta is the sampling as a turn's meta holds it: the system prompt as its digest.
func (s *Sampling) forMeta() *Sampling {
	if s.IsZero() {
		return nil
	}
	m := *s
	if m.System != "" {
		h := sha256.Sum256([]byte(m.System))
		m.SystemSHA256 = hex.EncodeToString(h[:])
	}
	m.System = ""
	return &m
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
	// TaskType is the turn's task_type ("" : the episode's).
	TaskType string
}

// planner chooses the user turns of one episode.
type planner interface {
	// next returns the next user turn given the answer to the previous one ("" before the
	// first); ok is false when the episode is over.
	next(answer string) (s Step, ok bool)
	// planned is how many turns the episode will have.
	planned() int
}

// rules is the document's rule-based action strategy over three phases, per task:
//
//   - memory build (turn 1 opens with "what is in the image?"): negation when the last answer
//     gave a known object a wrong attribute value; otherwise by evidence coverage, guidance
//     below 0.3, follow-up below 0.7, logic-skip from 0.7 (select_action's thresholds). The
//     phase's last turn is its logic-skip test whatever the coverage (the document's
//     _test_logic_skip asks it below 0.7, and its example sequence ends memory build with it),
//     so a model that gathers little evidence meets it too. The phase ends after its
//     logic-skip; its turns are half of those before the reasoning test, rounded up.
//   - state evolution: update, mislead, redundancy, distraction (the document's turn % 4,
//     counted from the phase start so that the state changes before it is questioned), then
//     fine-grained (the document's example sequence puts it fifth, at turn 10), in turn.
//   - reasoning test: the task's question, directly (the last tenth of the turns, at least
//     one); the turns after it follow up on the answer (the document's "可能的Follow-up"),
//     each asking something not asked before.
//
// A scene with further tasks (next_tasks) runs them one after another in the same
// conversation, each for the same number of turns, each opened by a next-task turn (phase
// next_task) and then the three phases again over its own evidence.
type rules struct {
	sc       *Scene
	k        *knowledge
	rng      *rand.Rand
	lang     Language
	turns    int // per task
	tasks    []*Task
	ti       int // current task
	turn     int // turns given so far, all tasks
	local    int // turns given so far in the current task
	memEnd   int // last memory-build turn of the task (local)
	reason   int // first reasoning-test turn of the task (local)
	phase    Phase
	evolveAt int // local turn the state evolution began
	// lastErrors are the wrong values of the latest answer.
	lastErrors []wrongValue
	updates    int // scene updates used
	required   []string
	dependsOn  [][]int         // of required, by index
	asked      map[string]bool // user turns asked so far, to ask no question twice
}

func newRules(sc *Scene, turns int, rng *rand.Rand) *rules {
	r := &rules{sc: sc, k: newKnowledge(sc), rng: rng, lang: sc.Language, turns: turns, tasks: sc.Tasks(), asked: map[string]bool{}}
	r.startTask()
	return r
}

// startTask resets the phases for the current task.
func (r *rules) startTask() {
	t := r.tasks[r.ti]
	if r.ti > 0 {
		// A new task drops the earlier task's conclusions (the document: the model should
		// "清空之前的状态"), not the state of the scene: an update announced earlier in the
		// conversation still holds, so the new task's evidence takes the updated values.
		r.k.setTask(t)
	}
	r.phase, r.local = PhaseMemoryBuild, 0
	nReason := max(1, r.turns/10)
	r.reason = r.turns - nReason + 1
	r.memEnd = max(1, r.reason/2) // half of the turns before the test, rounded up
	r.required, r.dependsOn = chainOrder(t)
}

// chainOrder lists a task's evidence texts in dependency order (each after the evidence it
// depends on; otherwise in the scene's order), as meta.required_evidence, and for each the
// indices in that list of the evidence it depends on, as meta.evidence_depends_on: the
// judge's Logic Dependency follows the graph.
func chainOrder(t *Task) ([]string, [][]int) {
	done := map[string]bool{}
	var order []*Evidence
	for len(order) < len(t.RequiredEvidence) {
		progressed := false
		for i := range t.RequiredEvidence {
			ev := &t.RequiredEvidence[i]
			if done[ev.ID] {
				continue
			}
			ready := true
			for _, d := range ev.DependsOn {
				ready = ready && done[d]
			}
			if ready {
				done[ev.ID], progressed = true, true
				order = append(order, ev)
			}
		}
		if !progressed { // a dependency cycle: the rest in the scene's order
			for i := range t.RequiredEvidence {
				if ev := &t.RequiredEvidence[i]; !done[ev.ID] {
					done[ev.ID] = true
					order = append(order, ev)
				}
			}
		}
	}
	at := map[string]int{}
	texts := make([]string, len(order))
	for i, ev := range order {
		at[ev.ID], texts[i] = i, ev.Text
	}
	deps := make([][]int, len(order))
	for i, ev := range order {
		deps[i] = []int{}
		for _, d := range ev.DependsOn {
			if j, ok := at[d]; ok {
				deps[i] = append(deps[i], j)
			}
		}
	}
	return texts, deps
}

func (r *rules) task() *Task { return r.tasks[r.ti] }

func (r *rules) planned() int { return r.turns * len(r.tasks) }

func (r *rules) next(answer string) (Step, bool) {
	if r.turn >= r.planned() {
		return Step{}, false
	}
	if r.turn > 0 {
		ob := r.k.observe(answer, r.turn)
		r.lastErrors = ob.errors
	}
	if r.local == r.turns {
		r.ti++
		r.startTask()
	}
	r.turn++
	r.local++
	cov := r.k.coverage()
	var s Step
	switch {
	case r.local == 1 && r.ti == 0:
		s = r.opening()
	case r.local == 1:
		r.phase = PhaseNextTask
		s = r.nextTask()
	case r.local == r.reason:
		r.phase = PhaseReasoningTest
		s = r.direct()
	case r.local > r.reason:
		s = r.reasoningFollowUp()
	case r.local <= r.memEnd && r.phase != PhaseStateEvolve:
		r.phase = PhaseMemoryBuild
		s = r.memoryBuild(cov, r.local == r.memEnd)
		if s.Action == ActLogicSkip {
			r.memEnd = r.local // the phase's test is asked: state evolution next
		}
	default:
		if r.phase != PhaseStateEvolve {
			r.phase, r.evolveAt = PhaseStateEvolve, r.local
		}
		s = r.stateEvolve((r.local - r.evolveAt) % 5)
	}
	r.asked[s.Text] = true
	s.Phase = r.phase
	s.TaskType = r.task().Type
	if s.TaskType == "" {
		s.TaskType = "reasoning"
	}
	s.Meta.Language, s.Meta.Phase = r.lang, r.phase
	s.Meta.Coverage = &cov
	if s.Meta.RequiredEvidence == nil {
		s.Meta.RequiredEvidence, s.Meta.EvidenceDependsOn = r.required, r.dependsOn
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
	text, _ := render(r.rng, tplDirect, r.lang, map[string]string{"question": r.task().Question})
	return Step{Action: ActInitial, Text: text, Expected: r.taskAnswer()}
}

// nextTask opens the next task of the episode in the same conversation.
func (r *rules) nextTask() Step {
	text, _ := render(r.rng, templateKey(ActNextTask), r.lang, map[string]string{"question": r.task().Question})
	return Step{Action: ActNextTask, Text: text,
		Expected: pick(r.lang, "Takes up the new task on its own, without carrying over the previous task's conclusions: ",
			"独立处理新任务，不混入上一个任务的结论：") + r.taskAnswer()}
}

// taskAnswer is the current task's answer as the scene's state now stands: a value an
// earlier update of the conversation changed is given as it is now (replaced where the
// scene's answer states it once, else said after it), so that an expected answer never
// contradicts an update the conversation made.
func (r *rules) taskAnswer() string {
	ans := r.task().Answer
	var notes []string
	for oi, o := range r.k.objs {
		for _, a := range slices.Sorted(maps.Keys(o.Attributes)) {
			old, now := o.Attributes[a], r.k.cur[oi][a]
			if old == now {
				continue
			}
			if strings.Count(ans, old) == 1 && strings.Count(r.task().Answer, old) == 1 && !strings.Contains(ans, now) {
				ans = strings.Replace(ans, old, now, 1)
			} else if strings.Contains(ans, old) {
				notes = append(notes, pick(r.lang, fmt.Sprintf("the %s's %s is now %s", r.name(oi), attributeName(a, r.lang), now),
					fmt.Sprintf("%s的%s现在是%s", r.name(oi), attributeName(a, r.lang), now)))
			}
		}
	}
	if len(notes) > 0 {
		ans += pick(r.lang, " (after the update: "+strings.Join(notes, "; ")+")", "（更新后："+strings.Join(notes, "；")+"）")
	}
	return ans
}

// reasoningFollowUp asks, after the direct question, about the reasoning behind the answer:
// each time toward evidence of the task (at random), each time a question not asked yet.
func (r *rules) reasoningFollowUp() Step {
	for range 8 {
		ei := r.rng.IntN(len(r.k.evidence))
		st := &r.k.evidence[ei]
		e := r.k.lastEntity
		if e < 0 || e == st.obj {
			e = st.obj
		}
		if s, ok := r.followUpOn(e, st); ok && !r.asked[s.Text] {
			return s
		}
	}
	// Every pairing asked already: ask for the evidence behind each fact in turn.
	for i := range r.k.evidence {
		st := &r.k.evidence[i]
		if s, ok := r.followUpOn(st.obj, st); ok && !r.asked[s.Text] {
			return s
		}
	}
	text := pick(r.lang, fmt.Sprintf("Which evidence in the image supports your answer? (%d)", r.local), fmt.Sprintf("图中有哪些证据支持你的回答？（%d）", r.local))
	return Step{Action: ActFollowUp, Text: text, Expected: pick(r.lang, "Cites the evidence: ", "列出证据：") + strings.Join(r.required, pick(r.lang, "; ", "；"))}
}

// memoryBuild chooses by the last answer's errors and the coverage; last is the phase's
// last turn, where the logic-skip test is asked whatever the coverage.
func (r *rules) memoryBuild(cov float64, last bool) Step {
	if last {
		return r.logicSkip()
	}
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
	if k == 4 {
		return r.fineGrained()
	}
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
	meta := Meta{Entity: sl["entity"], Attribute: w.attr, FalseValue: w.said, TrueValue: w.correct, TargetImage: r.imageOf(w.obj)}
	if w.denied {
		// The model denied the true value ("the plate is not white"): the correction states
		// the value ("should be white"), and there is no false value it asserted.
		text := renderOneOf(r.rng, templateKey(ActNegation), r.lang, sl, []int{0, 1})
		meta.FalseValue = ""
		return Step{Action: ActNegation, Text: text,
			Expected: pick(r.lang,
				fmt.Sprintf("Accepts the correction: the %s's %s is %s, and revises its reasoning.", sl["entity"], sl["attribute"], w.correct),
				fmt.Sprintf("接受纠正：%s的%s是%s，并据此修正推理。", sl["entity"], sl["attribute"], w.correct)),
			Meta: meta}
	}
	text, _ := render(r.rng, templateKey(ActNegation), r.lang, sl)
	return Step{Action: ActNegation, Text: text,
		Expected: pick(r.lang,
			fmt.Sprintf("Accepts the correction: the %s's %s is %s, not %s, and revises its reasoning.", sl["entity"], sl["attribute"], w.correct, w.said),
			fmt.Sprintf("接受纠正：%s的%s是%s，不是%s，并据此修正推理。", sl["entity"], sl["attribute"], w.correct, w.said)),
		Meta: meta}
}

// guidance points toward a missing evidence drawn at random (the document's
// random.choice(missing_evidence), from the episode's seeded generator).
func (r *rules) guidance() Step {
	miss := r.k.missing()
	if len(miss) == 0 {
		return r.logicSkip()
	}
	ei := miss[r.rng.IntN(len(miss))]
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
// evidence of the reasoning chain (the document's _select_by_dependency).
func (r *rules) followUp() (Step, bool) {
	e := r.k.lastEntity
	ti := r.k.nextByDependency()
	if e < 0 || ti < 0 {
		return Step{}, false
	}
	// A question not asked yet, about that entity or else the evidence's own object; none
	// left: guidance instead (asking the same thing again tests nothing).
	target := &r.k.evidence[ti]
	for _, o := range []int{e, target.obj} {
		for range 8 {
			if s, ok := r.followUpOn(o, target); ok && !r.asked[s.Text] {
				return s, true
			}
		}
	}
	return Step{}, false
}

// followUpOn asks about object e toward the evidence target. What a follow-up says the
// model said is only what it asserted: "You mentioned the {entity}" of an object its answers
// named, "Why do you think the {entity} is {description}?" with the value it last asserted
// of the object (never the scene's value: the model may not have said it).
func (r *rules) followUpOn(e int, target *evidenceState) (Step, bool) {
	sl := r.slots()
	sl["entity"], sl["target"] = r.name(e), target.ev.Text
	allowed := []int{1, 2} // "can you describe it in more detail?", "where in the image is it?"
	if r.k.mentioned[e] {
		allowed = append(allowed, 0)
	}
	for _, a := range slices.Sorted(maps.Keys(r.k.said[e])) {
		if a != "position" {
			sl["description"] = r.k.said[e][a]
			allowed = append(allowed, 3)
			break
		}
	}
	text := renderOneOf(r.rng, templateKey(ActFollowUp), r.lang, sl, allowed)
	if text == "" {
		return Step{}, false
	}
	return Step{Action: ActFollowUp, Text: text,
		Expected: pick(r.lang, "Extends the reasoning from the "+sl["entity"]+" with image evidence: "+target.ev.Text+".",
			"从"+sl["entity"]+"出发，用图像证据推进推理："+target.ev.Text+"。"),
		Meta: Meta{Entity: sl["entity"], TargetImage: r.imageOf(e)}}, true
}

// fineGrained asks for the precise value of what the last answer said coarsely: an object
// it named without one of its attributes (the document's _detect_coarse_grained); when the
// answer named none, an object and attribute drawn at random.
func (r *rules) fineGrained() Step {
	var oi int
	var attr string
	if n := len(r.k.coarse); n > 0 {
		c := r.k.coarse[r.rng.IntN(n)]
		oi, attr = c.obj, c.attr
	} else {
		oi = r.rng.IntN(len(r.k.objs))
		keys := slices.Sorted(maps.Keys(r.k.cur[oi]))
		if len(keys) > 0 {
			attr = keys[r.rng.IntN(len(keys))]
		}
	}
	sl := r.slots()
	sl["entity"] = r.name(oi)
	if attr == "" {
		if _, ok := r.k.cur[oi]["position"]; ok {
			attr = "position"
		}
	}
	// The question asks for the attribute meant: a position by the document's "准确位置"
	// template, any other attribute by its "{attribute}" templates.
	var allowed []int
	switch attr {
	case "position":
		allowed = []int{1}
	case "":
		allowed = []int{0}
	default:
		sl["attribute"] = attributeName(attr, r.lang)
		allowed = []int{2, 3}
	}
	text := renderOneOf(r.rng, templateKey(ActFineGrained), r.lang, sl, allowed)
	val := r.k.cur[oi][attr]
	exp := r.describe(oi)
	if attr != "" {
		an := attributeName(attr, r.lang)
		exp = pick(r.lang, fmt.Sprintf("The %s's %s is %s.", sl["entity"], an, val), fmt.Sprintf("%s的%s是%s。", sl["entity"], an, val))
	}
	return Step{Action: ActFineGrained, Text: text, Expected: exp,
		Meta: Meta{Entity: sl["entity"], Attribute: attr, TrueValue: val, TargetImage: r.imageOf(oi)}}
}

func (r *rules) logicSkip() Step {
	text, _ := render(r.rng, templateKey(ActLogicSkip), r.lang, nil)
	var miss []string
	for _, i := range r.k.missing() {
		miss = append(miss, r.k.evidence[i].ev.Text)
	}
	exp := pick(r.lang, "Does not skip the reasoning: answers ("+r.task().Answer+") only with the evidence behind it",
		"不跳过推理：给出答案（"+r.task().Answer+"）时说明依据")
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
		// A value a later task of the conversation rests on is not changed at random: that
		// task's question and answer are the scene's.
		oi, attr = r.randomFactExcept(r.laterEvidence)
		if oi < 0 {
			return Step{}, false
		}
		nv = wrongValueFor(r.k, oi, attr, r.rng)
		if nv == "" {
			return Step{}, false
		}
	}
	old := r.k.cur[oi][attr]
	r.k.setValue(oi, attr, nv)
	sl := r.slots()
	sl["entity"], sl["attribute"], sl["old_value"], sl["new_value"] = r.name(oi), attributeName(attr, r.lang), old, nv
	text, _ := render(r.rng, templateKey(ActUpdate), r.lang, sl)
	return Step{Action: ActUpdate, Text: text,
		Expected: pick(r.lang, fmt.Sprintf("Takes the change: the %s's %s is now %s (no longer %s).", sl["entity"], sl["attribute"], nv, old),
			fmt.Sprintf("接受变化：%s的%s现在是%s（不再是%s）。", sl["entity"], sl["attribute"], nv, old)),
		Meta: Meta{Entity: sl["entity"], Attribute: attr, OldValue: old, NewValue: nv, TrueValue: nv, TargetImage: r.imageOf(oi)}}, true
}

// laterEvidence reports whether a task after the current one rests on the object's attribute.
func (r *rules) laterEvidence(oi int, attr string) bool {
	for _, t := range r.tasks[r.ti+1:] {
		for _, ev := range t.RequiredEvidence {
			if ev.Entity == r.k.objs[oi].ID && (ev.Attribute == attr || ev.Attribute == "") {
				return true
			}
		}
	}
	return false
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
		Expected: pick(r.lang, fmt.Sprintf("No: the image shows the %s %s %s, not %s.", sl["entity"], sl["is"], truth, wrong),
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
	// The document asks it only about evidence the model already gave: with an empty pool
	// there is nothing to repeat ("you already told me…" about what it never said).
	if len(pool) == 0 {
		return Step{}, false
	}
	// Only what the model asserted is quoted: the sentence its assertion stood in, and the
	// value as it asserted it (a keyword's evidence has none: "You said the {entity} is
	// {value}" is not asked of it).
	st := &r.k.evidence[pool[r.rng.IntN(len(pool))]]
	oi, attr, val = st.obj, st.ev.Attribute, st.said
	sl["statement"] = st.statement
	sl["entity"], sl["value"] = r.name(oi), val
	if attr != "" && val != "" {
		sl["attribute"] = attributeName(attr, r.lang)
	}
	text, ok := render(r.rng, templateKey(ActRedundancy), r.lang, sl)
	if !ok {
		return Step{}, false
	}
	fact := sl["statement"]
	if fact == "" {
		fact = pick(r.lang, "the "+sl["entity"]+" "+sl["is"]+" "+val, sl["entity"]+"是"+val)
	}
	return Step{Action: ActRedundancy, Text: text,
		Expected: pick(r.lang, "Confirms briefly, without repeating itself at length: "+fact+".", "简洁确认，不冗长重复："+fact+"。"),
		Meta:     Meta{Entity: sl["entity"], Attribute: attr, TrueValue: r.evidenceValue(st), TargetImage: r.imageOf(oi)}}, true
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
func (r *rules) randomFact() (int, string) { return r.randomFactExcept(nil) }

// randomFactExcept is randomFact among the facts skip does not reject.
func (r *rules) randomFactExcept(skip func(oi int, attr string) bool) (int, string) {
	var cands, colored [][2]int
	var attrs [][]string
	for i := range r.k.objs {
		keys := slices.Sorted(maps.Keys(r.k.cur[i]))
		attrs = append(attrs, keys)
		for j, a := range keys {
			if skip != nil && skip(i, a) {
				continue
			}
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
