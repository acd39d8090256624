package vistrajqa

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/m3bench/m3eval/internal/convert/domainav2"
)

// MaxLineBytes bounds one input line: a trajectory with long observations is fine, a file
// without newlines is an error instead of unbounded memory.
const MaxLineBytes = 256 << 20

// RecordError is a record that does not fit the input schema: File and Line locate it, Path
// names the field (step_plan[3].step_num). The reader can go on after it.
type RecordError struct {
	File string
	Line int
	Path string
	Msg  string
}

// Error formats the error as file:line: field: problem.
func (e *RecordError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Path, e.Msg)
}

// Reader reads trajectories from a JSON Lines stream with a bounded line buffer.
type Reader struct {
	file string
	sc   *bufio.Scanner
	line int
}

// NewReader reads r; file names it in errors.
func NewReader(r io.Reader, file string) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	return &Reader{file: file, sc: sc}
}

// Line returns the line number of the record last returned.
func (r *Reader) Line() int { return r.line }

// Next returns the next trajectory. It returns io.EOF at the end, a *RecordError for a
// record that does not fit (the next call goes on with the following line), and any other
// error for a stream that cannot be read further. Blank lines are skipped.
func (r *Reader) Next() (*Trajectory, error) {
	b, err := r.nextLine()
	if err != nil {
		return nil, err
	}
	return r.parse(b, r.line)
}

// parse checks one line; it needs no Reader state beyond the file name, so lines can be
// parsed on other goroutines.
func (r *Reader) parse(b []byte, line int) (*Trajectory, error) {
	t, path, msg := parseTrajectory(b)
	if msg != "" {
		return nil, &RecordError{File: r.file, Line: line, Path: path, Msg: msg}
	}
	return t, nil
}

// nextLine returns the next non-blank line (valid until the next call) or io.EOF.
func (r *Reader) nextLine() ([]byte, error) {
	for r.sc.Scan() {
		r.line++
		if b := bytes.TrimSpace(r.sc.Bytes()); len(b) > 0 {
			return b, nil
		}
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: line longer than %d MiB", r.file, r.line+1, MaxLineBytes>>20)
		}
		return nil, fmt.Errorf("%s:%d: %w", r.file, r.line+1, err)
	}
	return nil, io.EOF
}

// The wire types mirror the JSON Schema (schema/vistrajqa.schema.json): a pointer is a
// required key (nil = missing or null), a plain value an optional one (null = absent).
// TestSchemaAgreement holds the two together.
type (
	wireTrajectory struct {
		SessionID        *string           `json:"session_id"`
		StepPlan         *[]wireStep       `json:"step_plan"`
		Probes           []wireProbe       `json:"probes"`
		PostTrajectoryQA []wireQA          `json:"post_trajectory_qa"`
		MemoryPoints     []wireMemoryPoint `json:"memory_points"`
	}
	wireStep struct {
		StepNum      *int    `json:"step_num"`
		Observation  *string `json:"observation"`
		Feedback     string  `json:"feedback"`
		ImageCaption string  `json:"image_caption"`
		Thought      string  `json:"thought"`
		Action       *string `json:"action"`
	}
	wireProbe struct {
		AfterStep *int      `json:"after_step"`
		Questions *[]wireQA `json:"questions"`
	}
	wireQA struct {
		Question   *string  `json:"question"`
		Answer     *string  `json:"answer"`
		Type       *string  `json:"type"`
		Evidence   []string `json:"evidence"`
		Difficulty string   `json:"difficulty"`
	}
	wireMemoryPoint struct {
		MPID             *string  `json:"mp_id"`
		Content          *string  `json:"content"`
		Type             *string  `json:"type"`
		Source           *string  `json:"source"`
		StepNum          *int     `json:"step_num"`
		IsUpdate         *bool    `json:"is_update"`
		OriginalMemories []string `json:"original_memories"`
		Importance       *float64 `json:"importance"`
		UpdateType       string   `json:"update_type"`
	}
)

// Importances are the importance values the guide allows.
var Importances = []float64{0.4, 0.6, 0.8, 1.0}

var (
	mpSessionPattern = regexp.MustCompile(`^mp_S([0-9]+)_[0-9]+$`)
	imagePattern     = regexp.MustCompile(`^S([0-9]+)_img_([0-9]+)$`)
)

// checker collects the first problem of a record; later checks are skipped once it is set,
// so one record gives one error with one field.
type checker struct{ path, msg string }

func (c *checker) fail(path, format string, args ...any) {
	if c.msg == "" {
		c.path, c.msg = path, fmt.Sprintf(format, args...)
	}
}

func (c *checker) str(path string, v *string, nonEmpty bool) string {
	switch {
	case v == nil:
		c.fail(path, "missing")
		return ""
	case nonEmpty && *v == "":
		c.fail(path, "empty")
	}
	return *v
}

func (c *checker) posInt(path string, v *int) int {
	switch {
	case v == nil:
		c.fail(path, "missing")
		return 0
	case *v < 1:
		c.fail(path, "%d, want 1 or more", *v)
	}
	return *v
}

func (c *checker) enum(path string, v *string, allowed []string) string {
	if v == nil {
		c.fail(path, "missing")
		return ""
	}
	if !slices.Contains(allowed, *v) {
		c.fail(path, "%q is not one of %s", *v, strings.Join(allowed, ", "))
	}
	return *v
}

// parseTrajectory decodes and checks one record; msg is empty when it fits. The structural
// checks (what the JSON Schema says) come first, then the rules that relate fields.
func parseTrajectory(b []byte) (t *Trajectory, path, msg string) {
	t, path, msg = decodeRecord(b)
	if msg != "" {
		return nil, path, msg
	}
	if path, msg = t.check(); msg != "" {
		return nil, path, msg
	}
	return t, "", ""
}

// decodeRecord decodes one record and applies exactly the rules of the JSON Schema
// (required keys, types, minimum, minLength, minItems, enums, the is_update condition).
func decodeRecord(b []byte) (t *Trajectory, path, msg string) {
	if b[0] != '{' {
		return nil, "", "not a JSON object (one trajectory per line)"
	}
	var w wireTrajectory
	if err := jsonv2.Unmarshal(b, &w); err != nil {
		path, msg := locate(b, err)
		return nil, path, msg
	}
	var c checker
	t = &Trajectory{SessionID: c.str("session_id", w.SessionID, true)}
	if w.StepPlan == nil {
		c.fail("step_plan", "missing")
	} else if len(*w.StepPlan) == 0 {
		c.fail("step_plan", "empty: a trajectory needs at least one step")
	}
	if c.msg != "" {
		return nil, c.path, c.msg
	}
	t.Steps = make([]Step, len(*w.StepPlan))
	for i, s := range *w.StepPlan {
		at := fmt.Sprintf("step_plan[%d]", i)
		t.Steps[i] = Step{
			StepNum:      c.posInt(at+".step_num", s.StepNum),
			Observation:  c.str(at+".observation", s.Observation, false),
			Feedback:     s.Feedback,
			ImageCaption: s.ImageCaption,
			Thought:      s.Thought,
			Action:       c.str(at+".action", s.Action, false),
		}
	}
	t.Probes = make([]Probe, len(w.Probes))
	for i, p := range w.Probes {
		at := fmt.Sprintf("probes[%d]", i)
		t.Probes[i].AfterStep = c.posInt(at+".after_step", p.AfterStep)
		if p.Questions == nil {
			c.fail(at+".questions", "missing")
		} else if len(*p.Questions) == 0 {
			c.fail(at+".questions", "empty: a probe needs at least one question")
		} else {
			t.Probes[i].Questions = qaItems(&c, at+".questions", *p.Questions)
		}
	}
	t.PostTrajectoryQA = qaItems(&c, "post_trajectory_qa", w.PostTrajectoryQA)
	t.MemoryPoints = make([]MemoryPoint, len(w.MemoryPoints))
	for i, m := range w.MemoryPoints {
		at := fmt.Sprintf("memory_points[%d]", i)
		mp := MemoryPoint{
			MPID:       c.str(at+".mp_id", m.MPID, true),
			Content:    c.str(at+".content", m.Content, true),
			Type:       c.enum(at+".type", m.Type, domainav2.MemoryTypes),
			Source:     c.enum(at+".source", m.Source, domainav2.MemorySources),
			StepNum:    c.posInt(at+".step_num", m.StepNum),
			UpdateType: m.UpdateType,
		}
		if m.IsUpdate == nil {
			c.fail(at+".is_update", "missing")
		} else {
			mp.IsUpdate = *m.IsUpdate
		}
		mp.OriginalMemories = m.OriginalMemories
		if mp.IsUpdate && len(mp.OriginalMemories) == 0 {
			c.fail(at+".original_memories", "missing or empty on an update (is_update is true)")
		}
		switch {
		case m.Importance == nil:
			c.fail(at+".importance", "missing")
		case !slices.Contains(Importances, *m.Importance):
			c.fail(at+".importance", "%v is not one of 0.4, 0.6, 0.8, 1.0", *m.Importance)
		default:
			mp.Importance = *m.Importance
		}
		t.MemoryPoints[i] = mp
	}
	if c.msg != "" {
		return nil, c.path, c.msg
	}
	return t, "", ""
}

// check applies the rules that relate fields to each other, which a JSON Schema cannot say:
// step numbering, probe order, memory point placement, evidence resolution.
func (t *Trajectory) check() (path, msg string) {
	var c checker
	for i, s := range t.Steps {
		if s.StepNum != i+1 {
			// The cut and the image ids count steps by position; a gap or a swap would move
			// memory points and evidence into the wrong session without anyone noticing.
			c.fail(fmt.Sprintf("step_plan[%d].step_num", i), "%d, want %d: steps are numbered 1, 2, ... in order", s.StepNum, i+1)
			return c.path, c.msg
		}
	}
	last := len(t.Steps)
	prev := 0
	for i, p := range t.Probes {
		at := fmt.Sprintf("probes[%d].after_step", i)
		switch {
		case p.AfterStep > last:
			c.fail(at, "%d is after the last step (%d)", p.AfterStep, last)
		case p.AfterStep <= prev:
			c.fail(at, "%d is not after the previous probe's step %d", p.AfterStep, prev)
		}
		prev = p.AfterStep
	}
	if c.msg != "" {
		return c.path, c.msg
	}

	ss := t.Sessions()
	mpIDs := make(map[string]bool, len(t.MemoryPoints))
	for i, mp := range t.MemoryPoints {
		at := fmt.Sprintf("memory_points[%d]", i)
		if mpIDs[mp.MPID] {
			c.fail(at+".mp_id", "duplicate: %s appears earlier in memory_points", mp.MPID)
		}
		mpIDs[mp.MPID] = true
		if mp.StepNum > last {
			c.fail(at+".step_num", "%d is after the last step (%d)", mp.StepNum, last)
		} else if sm := mpSessionPattern.FindStringSubmatch(mp.MPID); sm != nil {
			// An id like mp_S04_1 was named by the generator after its own session cut; if it
			// disagrees with ours, placing the point by step_num would contradict its name.
			want := ss[sessionOf(ss, mp.StepNum)].ID
			if "S"+sm[1] != want {
				c.fail(at+".mp_id", "%s names session S%s but step_num %d falls in %s", mp.MPID, sm[1], mp.StepNum, want)
			}
		}
	}
	if c.msg != "" {
		return c.path, c.msg
	}

	// Every evidence id must resolve, or the framework's Evidence Coverage would count a
	// reference to nothing.
	resolve := func(at string, qs []QAItem) {
		for i, q := range qs {
			for j, e := range q.Evidence {
				if mpIDs[e] || imageExists(ss, e) {
					continue
				}
				c.fail(fmt.Sprintf("%s[%d].evidence[%d]", at, i, j), "%q is neither an mp_id of this trajectory nor one of its image ids (<session>_img_<k>)", e)
			}
		}
	}
	for i, p := range t.Probes {
		resolve(fmt.Sprintf("probes[%d].questions", i), p.Questions)
	}
	resolve("post_trajectory_qa", t.PostTrajectoryQA)
	return c.path, c.msg
}

// imageExists reports whether id names the frame of a step: S<nn>_img_<k>, the k-th step
// (from 1) of session S<nn>.
func imageExists(ss []Span, id string) bool {
	m := imagePattern.FindStringSubmatch(id)
	if m == nil {
		return false
	}
	k, err1 := strconv.Atoi(m[1])
	n, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil || k >= len(ss) || SessionID(k) != "S"+m[1] {
		return false
	}
	return n >= 1 && n <= ss[k].Last-ss[k].First+1
}

var abbrevs = func() []string {
	out := make([]string, len(domainav2.QuestionTypes))
	for i, t := range domainav2.QuestionTypes {
		out[i] = t.Abbrev
	}
	return out
}()

// qaItems decodes the QA items at path at with the schema's rules.
func qaItems(c *checker, at string, ws []wireQA) []QAItem {
	out := make([]QAItem, len(ws))
	for i, q := range ws {
		qat := fmt.Sprintf("%s[%d]", at, i)
		out[i] = QAItem{
			Question:   c.str(qat+".question", q.Question, true),
			Answer:     c.str(qat+".answer", q.Answer, true),
			Type:       c.enum(qat+".type", q.Type, abbrevs),
			Evidence:   q.Evidence,
			Difficulty: q.Difficulty,
		}
		for j, e := range q.Evidence {
			if e == "" {
				c.fail(fmt.Sprintf("%s.evidence[%d]", qat, j), "empty or null")
			}
		}
	}
	return out
}
