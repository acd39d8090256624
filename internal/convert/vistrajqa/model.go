// Package vistrajqa converts VisTrajQA trajectories (sessions-*.jsonl, one trajectory per
// line) into the eval framework's domain_a_v2 layout (package domainav2), following the
// VisTrajQA → eval framework adaptation guide: the input model and its JSON Schema, a
// streaming reader that names file, line and field for a bad record, the mapping, and Run,
// which writes a directory atomically after validating it.
package vistrajqa

import (
	"fmt"
	"sort"
)

// Trajectory is one VisTrajQA trajectory (one line of a sessions-*.jsonl file) after
// validation: steps numbered 1..len(Steps), probes in increasing AfterStep order.
type Trajectory struct {
	SessionID        string
	Steps            []Step
	Probes           []Probe
	PostTrajectoryQA []QAItem
	MemoryPoints     []MemoryPoint
}

// Step is one step of a trajectory.
type Step struct {
	StepNum      int
	Observation  string
	Feedback     string
	ImageCaption string
	Thought      string
	Action       string
}

// Probe is a set of questions asked after step AfterStep; it ends a session there.
type Probe struct {
	AfterStep int
	Questions []QAItem
}

// QAItem is one question. Type is one of the nine abbreviations (FR, DU, ..., CMR); Evidence
// holds memory point ids and image ids.
type QAItem struct {
	Question   string
	Answer     string
	Type       string
	Evidence   []string
	Difficulty string
}

// MemoryPoint is one gold memory point of a trajectory.
type MemoryPoint struct {
	MPID             string
	Content          string
	Type             string
	Source           string
	StepNum          int
	IsUpdate         bool
	OriginalMemories []string
	Importance       float64
	UpdateType       string
}

// Span is one session of the cut trajectory: steps First..Last (inclusive, 1-based).
type Span struct {
	ID          string
	First, Last int
}

// SessionID names the k-th session (from 0) as the framework's runner expects: S00, S01, ...
func SessionID(k int) string { return fmt.Sprintf("S%02d", k) }

// ImageID names the frame of the k-th step (from 1) of a session: S04_img_4.
func ImageID(session string, k int) string { return fmt.Sprintf("%s_img_%d", session, k) }

// spans cuts steps 1..nSteps at the probe boundaries: each probe ends a session, and the
// steps after the last probe (if any) make the final one. 30 steps with probes after
// 6/12/18/24 give S00 = 1–6, ..., S04 = 25–30. afters must be increasing and at most nSteps.
func spans(nSteps int, afters []int) []Span {
	out := make([]Span, 0, len(afters)+1)
	first := 1
	for _, a := range afters {
		out = append(out, Span{ID: SessionID(len(out)), First: first, Last: a})
		first = a + 1
	}
	if first <= nSteps {
		out = append(out, Span{ID: SessionID(len(out)), First: first, Last: nSteps})
	}
	return out
}

// Sessions returns the trajectory cut into sessions.
func (t *Trajectory) Sessions() []Span {
	afters := make([]int, len(t.Probes))
	for i, p := range t.Probes {
		afters[i] = p.AfterStep
	}
	return spans(len(t.Steps), afters)
}

// sessionOf returns the index of the span holding step n (spans must cover it).
func sessionOf(ss []Span, n int) int {
	return sort.Search(len(ss), func(i int) bool { return ss[i].Last >= n })
}
