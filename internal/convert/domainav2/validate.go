package domainav2

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"

	"github.com/m3bench/m3eval/internal/jsonpath"
)

// ErrInvalid is wrapped by the error of a Report that found problems.
var ErrInvalid = errors.New("invalid converted dataset")

// MaxLineBytes bounds one line of a JSON Lines file (and one record buffer); a longer line is
// an error rather than unbounded memory.
const MaxLineBytes = 256 << 20

// maxListed bounds how many problems (and warnings) a Report keeps; the counts go on.
const maxListed = 200

// Problem is one finding in a converted directory. Line is the 1-based line of a JSON Lines
// file; for MainFile, Index is the position of the sample in the array instead.
type Problem struct {
	File     string
	Line     int
	Index    int
	SampleID string
	Path     string
	Msg      string
}

// String formats the problem as file:line (or file[index]), the sample, the field and what
// is wrong, e.g. "stage4b_qa_checkpoints.jsonl:4 (sample vab-7): checkpoints[0]...: ...".
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	switch {
	case p.Line > 0:
		fmt.Fprintf(&b, ":%d", p.Line)
	case p.Index >= 0:
		fmt.Fprintf(&b, "[%d]", p.Index)
	}
	if p.SampleID != "" {
		fmt.Fprintf(&b, " (sample %s)", p.SampleID)
	}
	b.WriteString(": ")
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Report is the outcome of Validate: problems (the framework would fail, or would silently
// mis-score), warnings (legal but suspicious), and statistics per source.
type Report struct {
	Dir          string
	Mode         string // from the manifest, if any
	Samples      int
	Problems     []Problem // the first maxListed
	ProblemCount int
	Warnings     []Problem // the first maxListed
	WarningCount int
	Sources      []*Stats // per source, manifest order; one "all" entry without a manifest
	Total        Stats
}

// OK reports whether the directory has no problem.
func (r *Report) OK() bool { return r.ProblemCount == 0 }

// Err returns nil for a valid directory and an error wrapping ErrInvalid otherwise.
func (r *Report) Err() error {
	if r.OK() {
		return nil
	}
	first := r.Problems[0].String()
	if r.ProblemCount == 1 {
		return fmt.Errorf("%w: %s", ErrInvalid, first)
	}
	return fmt.Errorf("%w: %d problems, first: %s", ErrInvalid, r.ProblemCount, first)
}

func (r *Report) problem(p Problem) {
	r.ProblemCount++
	if len(r.Problems) < maxListed {
		r.Problems = append(r.Problems, p)
	}
}

func (r *Report) warn(p Problem) {
	r.WarningCount++
	if len(r.Warnings) < maxListed {
		r.Warnings = append(r.Warnings, p)
	}
}

// Stats counts what one source contributes to each evaluation dimension of the guide.
type Stats struct {
	Source           string
	Samples          int
	Sessions         int
	Turns            int
	ImageAttachments int
	MemoryPoints     int
	MemoryByType     map[string]int
	MemoryBySource   map[string]int
	Updates          int
	Checkpoints      int
	Questions        int
	QuestionsByType  map[string]int // by abbreviation
	EvidenceMemory   int
	EvidenceImage    int
}

func newStats(source string) *Stats {
	return &Stats{
		Source:          source,
		MemoryByType:    map[string]int{},
		MemoryBySource:  map[string]int{},
		QuestionsByType: map[string]int{},
	}
}

func (s *Stats) add(o *Stats) {
	s.Samples += o.Samples
	s.Sessions += o.Sessions
	s.Turns += o.Turns
	s.ImageAttachments += o.ImageAttachments
	s.MemoryPoints += o.MemoryPoints
	s.Updates += o.Updates
	s.Checkpoints += o.Checkpoints
	s.Questions += o.Questions
	s.EvidenceMemory += o.EvidenceMemory
	s.EvidenceImage += o.EvidenceImage
	for k, v := range o.MemoryByType {
		s.MemoryByType[k] += v
	}
	for k, v := range o.MemoryBySource {
		s.MemoryBySource[k] += v
	}
	for k, v := range o.QuestionsByType {
		s.QuestionsByType[k] += v
	}
}

// Loose mirrors of the record types: pointers tell a missing key from a zero value, which the
// framework's loader would otherwise read as a KeyError at best and a silent default at worst.
type (
	looseSample struct {
		UUID     *string         `json:"uuid"`
		SampleID *string         `json:"sample_id"`
		Sessions *[]looseSession `json:"sessions"`
	}
	looseSession struct {
		ID           *string        `json:"_v2_session_id"`
		Dialogue     *[]looseTurn   `json:"dialogue"`
		MemoryPoints *[]looseMemory `json:"memory_points"`
	}
	looseTurn struct {
		Role        *string  `json:"role"`
		Content     isString `json:"content"`
		Attachments *[]struct {
			Type    *string `json:"type"`
			Caption *string `json:"caption"`
			ImageID *string `json:"image_id"`
		} `json:"attachments"`
	}
	looseMemory struct {
		MemoryID         *string   `json:"memory_id"`
		MemoryContent    *string   `json:"memory_content"`
		MemoryType       *string   `json:"memory_type"`
		MemorySource     *string   `json:"memory_source"`
		IsUpdate         *bool     `json:"is_update"`
		OriginalMemories *[]string `json:"original_memories"`
		Importance       *float64  `json:"importance"`
		UpdateType       *string   `json:"update_type"`
	}
	looseMemoryLine struct {
		UUID           *string `json:"uuid"`
		SampleID       *string `json:"sample_id"`
		MemorySessions *[]struct {
			SessionID    *string        `json:"session_id"`
			MemoryPoints *[]looseMemory `json:"memory_points"`
		} `json:"memory_sessions"`
	}
	looseQALine struct {
		UUID        *string `json:"uuid"`
		SampleID    *string `json:"sample_id"`
		Checkpoints *[]struct {
			CheckpointID    *string    `json:"checkpoint_id"`
			CoveredSessions *[]string  `json:"covered_sessions"`
			Questions       *[]looseQA `json:"questions"`
		} `json:"checkpoints"`
	}
	looseQA struct {
		Question *string `json:"question"`
		Answer   *string `json:"answer"`
		Evidence *[]struct {
			MemoryID *string `json:"memory_id"`
			ImageID  *string `json:"image_id"`
		} `json:"evidence"`
		QuestionType       *string `json:"question_type"`
		QuestionTypeAbbrev *string `json:"question_type_abbrev"`
		Difficulty         *string `json:"difficulty"`
	}
)

// sample is what the checks of the two JSON Lines files need to know about one sample.
type sample struct {
	uuid, id   string
	sessions   []string       // in order
	sessionPos map[string]int // session id -> position
	userTurns  []int          // per session, the number of user turns (one image slot each)
	images     map[string]int // attachment image id -> session position
	memory     map[string]int // memory id -> session position
	stats      *Stats
}

// imageIDPattern is the converters' naming of a step's frame: <session>_img_<k>, the k-th
// user turn (step) of the session, counted from 1.
var imageIDPattern = regexp.MustCompile(`^(.+)_img_([0-9]+)$`)

// imageSession returns the session position of an image id, or -1 if it names no image.
func (s *sample) imageSession(id string) int {
	if pos, ok := s.images[id]; ok {
		return pos
	}
	m := imageIDPattern.FindStringSubmatch(id)
	if m == nil {
		return -1
	}
	pos, ok := s.sessionPos[m[1]]
	if !ok {
		return -1
	}
	k, err := strconv.Atoi(m[2])
	if err != nil || k < 1 || k > s.userTurns[pos] {
		return -1
	}
	return pos
}

// Validate checks the converted directory dir. The error is for a directory that cannot be
// read at all; findings go into the Report (see Report.Err). The three files are read as
// streams in step; lines of the JSON Lines files that come out of the main file's order are
// held until their sample comes, so memory stays flat for a well-ordered directory.
func Validate(dir string) (*Report, error) {
	r := &Report{Dir: dir}
	man, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	sourceOf := map[string]string{}
	byName := map[string]*Stats{}
	if man != nil {
		r.Mode = man.Mode
		for _, src := range man.Sources {
			st := newStats(src.Name)
			r.Sources = append(r.Sources, st)
			byName[src.Name] = st
			for _, id := range src.SampleIDs {
				sourceOf[id] = src.Name
			}
		}
	}
	statsFor := func(id string) *Stats {
		name, ok := sourceOf[id]
		if !ok {
			name = "all"
			if man != nil {
				name = "(not in manifest)"
			}
		}
		st := byName[name]
		if st == nil {
			st = newStats(name)
			byName[name] = st
			r.Sources = append(r.Sources, st)
		}
		return st
	}

	mainF, err := os.Open(filepath.Join(dir, MainFile))
	if err != nil {
		return nil, fmt.Errorf("validate %s: %w", dir, err)
	}
	defer mainF.Close()
	memF, err := os.Open(filepath.Join(dir, MemoryFile))
	if err != nil {
		return nil, fmt.Errorf("validate %s: %w", dir, err)
	}
	defer memF.Close()
	qaF, err := os.Open(filepath.Join(dir, QAFile))
	if err != nil {
		return nil, fmt.Errorf("validate %s: %w", dir, err)
	}
	defer qaF.Close()

	// Three goroutines decode the three files, the heavy part; this one checks. Closing done
	// stops them when Validate returns early.
	done := make(chan struct{})
	defer close(done)
	mem := newLineReader(MemoryFile, memF, func(l *looseMemoryLine) *string { return l.UUID }, r, done)
	qa := newLineReader(QAFile, qaF, func(l *looseQALine) *string { return l.UUID }, r, done)

	uuids := map[string]bool{}
	ids := map[string]bool{}
	samples := decodeMain(mainF, done)
	mainOK := true
	for it := range samples {
		for _, p := range it.probs {
			r.problem(p)
		}
		if it.fatal {
			mainOK = false
			break
		}
		if it.sample == nil {
			continue // a problem of the file after its last sample
		}
		i, ls := it.index, it.sample
		r.Samples++
		s := checkSample(r, i, ls, uuids, ids)
		src := statsFor(s.id)
		src.add(s.stats0()) // what checkSample counted before the source was known
		s.stats = src
		src.Samples++
		if s.uuid == "" {
			continue // nothing to match the other files' lines against
		}
		if line, n, ok := mem.find(s.uuid); ok {
			checkMemoryLine(r, s, line, n)
		} else if err := mem.err; err != nil {
			return nil, err
		} else {
			r.problem(Problem{File: MemoryFile, Index: -1, SampleID: s.id, Msg: "no line for this sample (uuid " + s.uuid + ")"})
		}
		if line, n, ok := qa.find(s.uuid); ok {
			checkQALine(r, s, line, n)
		} else if err := qa.err; err != nil {
			return nil, err
		} else {
			r.problem(Problem{File: QAFile, Index: -1, SampleID: s.id, Msg: "no line for this sample (uuid " + s.uuid + ")"})
		}
	}
	if mainOK {
		if r.Samples == 0 {
			r.problem(Problem{File: MainFile, Index: -1, Msg: "no samples"})
		}
		// Lines left over belong to no sample (or repeat one): the loader would either drop
		// them or let the later line win, and neither is what the converter meant.
		for _, lr := range []interface{ rest(map[string]bool) error }{mem, qa} {
			if err := lr.rest(uuids); err != nil {
				return nil, err
			}
		}
	}
	if man != nil && mainOK { // after a broken main file every id would be reported
		for _, src := range man.Sources {
			for _, id := range src.SampleIDs {
				if !ids[id] {
					r.problem(Problem{File: ManifestFile, Index: -1, SampleID: id, Msg: "listed under source " + src.Name + " but not in " + MainFile})
				}
			}
		}
	}
	if len(r.Sources) == 0 {
		r.Sources = append(r.Sources, newStats("all"))
	}
	r.Total = *newStats("all")
	for _, st := range r.Sources {
		r.Total.add(st)
	}
	return r, nil
}

// mainItem is one decoded sample of the main file, or the problem that ends the file.
type mainItem struct {
	index  int
	sample *looseSample
	probs  []Problem
	fatal  bool // the file cannot be read further: stop
}

// decodeMain streams the samples of the main file from a goroutine. Each value is read raw
// first, so that a wrong type inside one sample leaves the stream where it was and only
// invalid JSON (or a file that is not one array) stops it.
func decodeMain(f io.Reader, done <-chan struct{}) <-chan mainItem {
	out := make(chan mainItem, 64)
	go func() {
		defer close(out)
		send := func(it mainItem) bool {
			select {
			case out <- it:
				return true
			case <-done:
				return false
			}
		}
		fail := func(msg string) {
			send(mainItem{fatal: true, probs: []Problem{{File: MainFile, Index: -1, Msg: msg}}})
		}
		dec := jsontext.NewDecoder(bufio.NewReaderSize(f, 1<<20))
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
			fail("not a JSON array (the loader reads a list of samples)")
			return
		}
		for i := 0; dec.PeekKind() != ']'; i++ {
			val, err := dec.ReadValue()
			if err != nil {
				send(mainItem{fatal: true, probs: []Problem{{File: MainFile, Index: i, Msg: "invalid JSON: " + err.Error()}}})
				return
			}
			it := mainItem{index: i, sample: new(looseSample)}
			if err := jsonv2.Unmarshal(val, it.sample); err != nil {
				path, msg := decodeProblem(err)
				it.probs = []Problem{{File: MainFile, Index: i, Path: path, Msg: msg}}
			}
			if !send(it) {
				return
			}
		}
		// Problems after the last sample do not stop the checks of the other files.
		end := func(msg string) { send(mainItem{probs: []Problem{{File: MainFile, Index: -1, Msg: msg}}}) }
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != ']' {
			end("array not closed")
		} else if _, err := dec.ReadToken(); err != io.EOF {
			end("data after the array")
		}
	}()
	return out
}

// readManifest reads the optional manifest; nil without error when there is none.
func readManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // a directory written by another converter: statistics over "all"
	}
	if err != nil {
		return nil, fmt.Errorf("validate %s: %w", dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("validate %s: %s: %w", dir, ManifestFile, err)
	}
	return &m, nil
}

// decodeProblem turns a decoding error into the field it concerns and a message.
func decodeProblem(err error) (path, msg string) {
	var se *jsonv2.SemanticError
	if errors.As(err, &se) {
		want := "another type"
		if se.GoType != nil {
			want = jsonKind(se.GoType.String())
		}
		return jsonpath.Pointer(se.JSONPointer), fmt.Sprintf("JSON %s where %s expected", kindName(se.JSONKind), want)
	}
	return "", "invalid JSON: " + err.Error()
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "value"
}

// jsonKind turns a Go type name from a decoding error into the JSON kind it stands for.
func jsonKind(goType string) string {
	switch {
	case strings.HasSuffix(goType, "string"):
		return "a string"
	case strings.HasSuffix(goType, "bool"):
		return "a boolean"
	case strings.Contains(goType, "float"), strings.Contains(goType, "int"):
		return "a number"
	case strings.Contains(goType, "[]"):
		return "an array"
	default:
		return "an object"
	}
}

// isString records whether a key is there and holds a string, without decoding the string:
// dialogue text is most of the main file and the checks never read it.
type isString uint8

const (
	absent isString = iota
	aString
	notString
)

// UnmarshalJSONFrom implements jsonv2.UnmarshalerFrom.
func (s *isString) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*s = notString
	if dec.PeekKind() == '"' {
		*s = aString
	}
	return dec.SkipValue()
}

// checkSample checks one sample of the main file and returns what the checks of its two
// JSON Lines records need. Duplicate ids are not registered, so their lines stay unmatched.
func checkSample(r *Report, i int, ls *looseSample, uuids, ids map[string]bool) *sample {
	s := &sample{sessionPos: map[string]int{}, images: map[string]int{}, memory: map[string]int{}}
	if ls.SampleID != nil {
		s.id = *ls.SampleID
	}
	p := func(path, msg string) {
		r.problem(Problem{File: MainFile, Index: i, SampleID: s.id, Path: path, Msg: msg})
	}
	switch {
	case ls.SampleID == nil:
		p("sample_id", "missing")
	case s.id == "":
		p("sample_id", "empty")
	case ids[s.id]:
		p("sample_id", "duplicate: an earlier sample has the same id")
	default:
		ids[s.id] = true
	}
	switch {
	case ls.UUID == nil:
		p("uuid", "missing")
	case uuids[*ls.UUID]:
		p("uuid", "duplicate: "+*ls.UUID+" is the uuid of an earlier sample")
	default:
		if _, err := uuid.Parse(*ls.UUID); err != nil {
			p("uuid", fmt.Sprintf("%q is not a UUID", *ls.UUID))
		}
		s.uuid = *ls.UUID
		uuids[s.uuid] = true
	}
	if ls.Sessions == nil {
		p("sessions", "missing")
		return s
	}
	if len(*ls.Sessions) == 0 {
		p("sessions", "empty: the sample has no dialogue")
	}
	s.userTurns = make([]int, len(*ls.Sessions))
	for j, ss := range *ls.Sessions {
		at := fmt.Sprintf("sessions[%d]", j)
		switch {
		case ss.ID == nil:
			p(at+"._v2_session_id", "missing")
		case *ss.ID == "":
			p(at+"._v2_session_id", "empty")
		default:
			if _, dup := s.sessionPos[*ss.ID]; dup {
				p(at+"._v2_session_id", "duplicate session id "+*ss.ID)
			} else {
				s.sessionPos[*ss.ID] = j
			}
		}
		id := ""
		if ss.ID != nil {
			id = *ss.ID
		}
		s.sessions = append(s.sessions, id)
		s.stats0().Sessions++
		if ss.Dialogue == nil {
			p(at+".dialogue", "missing")
		} else {
			for k, t := range *ss.Dialogue {
				tat := fmt.Sprintf("%s.dialogue[%d]", at, k)
				s.stats0().Turns++
				switch {
				case t.Role == nil:
					p(tat+".role", "missing")
				case *t.Role == "user":
					s.userTurns[j]++
				case *t.Role == "assistant":
				default:
					p(tat+".role", fmt.Sprintf("%q is neither user nor assistant", *t.Role))
				}
				switch t.Content {
				case absent:
					p(tat+".content", "missing")
				case notString:
					p(tat+".content", "not a string")
				}
				if t.Attachments == nil {
					continue
				}
				for a, att := range *t.Attachments {
					aat := fmt.Sprintf("%s.attachments[%d]", tat, a)
					if att.Type == nil || *att.Type != AttachmentImageCaption {
						p(aat+".type", "want "+AttachmentImageCaption)
					}
					if att.Caption == nil || *att.Caption == "" {
						p(aat+".caption", "missing or empty (an empty caption should add no attachment)")
					}
					switch {
					case att.ImageID == nil || *att.ImageID == "":
						p(aat+".image_id", "missing or empty")
					default:
						if _, dup := s.images[*att.ImageID]; dup {
							p(aat+".image_id", "duplicate image id "+*att.ImageID)
						}
						s.images[*att.ImageID] = j
						s.stats0().ImageAttachments++
					}
				}
			}
		}
		if ss.MemoryPoints != nil {
			if j != 0 {
				p(at+".memory_points", "memory points outside the first session; later sessions' points belong in "+MemoryFile)
			}
			checkMemoryPoints(r, s, *ss.MemoryPoints, j, func(path, msg string) { p(at+".memory_points"+path, msg) })
		} else if j == 0 {
			r.warn(Problem{File: MainFile, Index: i, SampleID: s.id, Path: at + ".memory_points", Msg: "missing: the first session has no gold memory points"})
		}
	}
	return s
}

// stats0 collects counts before the sample's source is known; they are merged by Validate.
// Keeping one pending Stats per sample avoids a second pass over the sessions.
func (s *sample) stats0() *Stats {
	if s.stats == nil {
		s.stats = newStats("")
	}
	return s.stats
}

// checkMemoryPoints checks gold memory points of session pos and registers their ids.
func checkMemoryPoints(r *Report, s *sample, mps []looseMemory, pos int, p func(path, msg string)) {
	st := s.stats0()
	for k, m := range mps {
		at := fmt.Sprintf("[%d]", k)
		switch {
		case m.MemoryID == nil || *m.MemoryID == "":
			p(at+".memory_id", "missing or empty")
		default:
			if _, dup := s.memory[*m.MemoryID]; dup {
				p(at+".memory_id", "duplicate memory id "+*m.MemoryID)
			} else {
				s.memory[*m.MemoryID] = pos
			}
		}
		if m.MemoryContent == nil || *m.MemoryContent == "" {
			p(at+".memory_content", "missing or empty")
		}
		if m.MemoryType == nil || !slices.Contains(MemoryTypes, *m.MemoryType) {
			p(at+".memory_type", "want one of "+strings.Join(MemoryTypes, ", ")+got(m.MemoryType))
		} else {
			st.MemoryByType[*m.MemoryType]++
		}
		if m.MemorySource == nil || !slices.Contains(MemorySources, *m.MemorySource) {
			p(at+".memory_source", "want one of "+strings.Join(MemorySources, ", ")+got(m.MemorySource))
		} else {
			st.MemoryBySource[*m.MemorySource]++
		}
		switch {
		case m.IsUpdate == nil:
			p(at+".is_update", "missing")
		case *m.IsUpdate:
			st.Updates++
		}
		switch {
		case m.OriginalMemories == nil:
			p(at+".original_memories", "missing")
		case m.IsUpdate != nil && *m.IsUpdate && len(*m.OriginalMemories) == 0:
			p(at+".original_memories", "empty on an update: Update Handling has nothing to compare against")
		}
		if m.Importance == nil {
			p(at+".importance", "missing")
		} else if *m.Importance < 0 || *m.Importance > 1 {
			p(at+".importance", fmt.Sprintf("%g is outside [0, 1]", *m.Importance))
		}
		if m.UpdateType == nil {
			p(at+".update_type", "missing")
		}
		st.MemoryPoints++
	}
}

// got ends a message with the value found.
func got(s *string) string {
	if s == nil {
		return ", got nothing"
	}
	return fmt.Sprintf(", got %q", *s)
}

// checkMemoryLine checks a sample's line of the memory file.
func checkMemoryLine(r *Report, s *sample, l *looseMemoryLine, line int) {
	p := func(path, msg string) {
		r.problem(Problem{File: MemoryFile, Line: line, SampleID: s.id, Path: path, Msg: msg})
	}
	if l.SampleID == nil || *l.SampleID != s.id {
		p("sample_id", fmt.Sprintf("want %q, the sample_id of uuid %s in %s", s.id, s.uuid, MainFile)+got(l.SampleID))
	}
	if l.MemorySessions == nil {
		p("memory_sessions", "missing")
		return
	}
	seen := map[string]bool{}
	for j, ms := range *l.MemorySessions {
		at := fmt.Sprintf("memory_sessions[%d]", j)
		pos := -1
		switch {
		case ms.SessionID == nil:
			p(at+".session_id", "missing")
		case seen[*ms.SessionID]:
			p(at+".session_id", "session "+*ms.SessionID+" listed twice")
		default:
			seen[*ms.SessionID] = true
			var ok bool
			if pos, ok = s.sessionPos[*ms.SessionID]; !ok {
				p(at+".session_id", *ms.SessionID+" is not a session of the sample")
				pos = -1
			} else if pos == 0 {
				p(at+".session_id", "the first session's memory points belong in "+MainFile)
			}
		}
		if ms.MemoryPoints == nil {
			p(at+".memory_points", "missing")
			continue
		}
		checkMemoryPoints(r, s, *ms.MemoryPoints, pos, func(path, msg string) { p(at+".memory_points"+path, msg) })
	}
}

// checkQALine checks a sample's line of the QA file: checkpoints, question types, evidence.
func checkQALine(r *Report, s *sample, l *looseQALine, line int) {
	st := s.stats0()
	p := func(path, msg string) {
		r.problem(Problem{File: QAFile, Line: line, SampleID: s.id, Path: path, Msg: msg})
	}
	w := func(path, msg string) {
		r.warn(Problem{File: QAFile, Line: line, SampleID: s.id, Path: path, Msg: msg})
	}
	if l.SampleID == nil || *l.SampleID != s.id {
		p("sample_id", fmt.Sprintf("want %q, the sample_id of uuid %s in %s", s.id, s.uuid, MainFile)+got(l.SampleID))
	}
	if l.Checkpoints == nil {
		p("checkpoints", "missing")
		return
	}
	seen := map[string]bool{}
	for j, cp := range *l.Checkpoints {
		at := fmt.Sprintf("checkpoints[%d]", j)
		st.Checkpoints++
		switch {
		case cp.CheckpointID == nil || *cp.CheckpointID == "":
			p(at+".checkpoint_id", "missing or empty")
		case seen[*cp.CheckpointID]:
			p(at+".checkpoint_id", "duplicate checkpoint id "+*cp.CheckpointID)
		default:
			seen[*cp.CheckpointID] = true
		}
		last := -1 // position of the last covered session
		switch {
		case cp.CoveredSessions == nil || len(*cp.CoveredSessions) == 0:
			p(at+".covered_sessions", "missing or empty")
		default:
			for k, id := range *cp.CoveredSessions {
				pos, ok := s.sessionPos[id]
				switch {
				case !ok:
					p(fmt.Sprintf("%s.covered_sessions[%d]", at, k), id+" is not a session of the sample")
				case pos != k:
					// The runner fires a checkpoint after its last covered session and feeds
					// sessions in order, so anything but a prefix would test a different history.
					p(fmt.Sprintf("%s.covered_sessions[%d]", at, k), fmt.Sprintf("%s is session %d of the sample; covered sessions must be the first ones, in order", id, pos))
				default:
					last = pos
				}
			}
		}
		if cp.Questions == nil {
			p(at+".questions", "missing")
			continue
		}
		for k, q := range *cp.Questions {
			qat := fmt.Sprintf("%s.questions[%d]", at, k)
			st.Questions++
			if q.Question == nil || *q.Question == "" {
				p(qat+".question", "missing or empty")
			}
			if q.Answer == nil {
				p(qat+".answer", "missing")
			}
			if q.Difficulty == nil {
				p(qat+".difficulty", "missing")
			}
			var qt QuestionType
			ok := false
			if q.QuestionType != nil {
				for _, t := range QuestionTypes {
					if t.Name == *q.QuestionType {
						qt, ok = t, true
					}
				}
			}
			if !ok {
				p(qat+".question_type", "not one of the nine known types"+got(q.QuestionType))
			} else {
				st.QuestionsByType[qt.Abbrev]++
				if q.QuestionTypeAbbrev == nil || *q.QuestionTypeAbbrev != qt.Abbrev {
					p(qat+".question_type_abbrev", "want "+qt.Abbrev+" for "+qt.Name+got(q.QuestionTypeAbbrev))
				}
			}
			if q.Evidence == nil {
				p(qat+".evidence", "missing")
				continue
			}
			for e, ev := range *q.Evidence {
				eat := fmt.Sprintf("%s.evidence[%d]", qat, e)
				hasM := ev.MemoryID != nil && *ev.MemoryID != ""
				hasI := ev.ImageID != nil && *ev.ImageID != ""
				switch {
				case hasM == hasI:
					p(eat, "want exactly one of memory_id and image_id")
				case hasM:
					st.EvidenceMemory++
					pos, ok := s.memory[*ev.MemoryID]
					if !ok {
						p(eat+".memory_id", *ev.MemoryID+" is not a memory point of the sample")
					} else if last >= 0 && pos > last {
						w(eat+".memory_id", fmt.Sprintf("%s belongs to session %s, after the sessions this checkpoint covers", *ev.MemoryID, s.sessions[pos]))
					}
				default:
					st.EvidenceImage++
					pos := s.imageSession(*ev.ImageID)
					if pos < 0 {
						p(eat+".image_id", *ev.ImageID+" is not an image of the sample")
					} else if last >= 0 && pos > last {
						w(eat+".image_id", fmt.Sprintf("%s belongs to session %s, after the sessions this checkpoint covers", *ev.ImageID, s.sessions[pos]))
					}
				}
			}
		}
	}
}

// lineReader reads a JSON Lines file keyed by uuid, in step with the main file. Lines are
// scanned and decoded on a goroutine of their own, a little ahead of the checks.
type lineReader[T any] struct {
	file    string
	items   chan lineItem[T]
	uuidOf  func(*T) *string
	pending map[string]heldLine[T]
	r       *Report
	err     error // set by the decoding goroutine before it closes items
}

// lineItem is one decoded line: a record with its uuid, or the problems that kept it out.
type lineItem[T any] struct {
	rec   *T
	uuid  string
	line  int
	probs []Problem
}

type heldLine[T any] struct {
	rec  *T
	line int
}

// newLineReader starts decoding rd; closing done stops the goroutine early.
func newLineReader[T any](file string, rd io.Reader, uuidOf func(*T) *string, r *Report, done <-chan struct{}) *lineReader[T] {
	lr := &lineReader[T]{file: file, items: make(chan lineItem[T], 64), uuidOf: uuidOf, pending: map[string]heldLine[T]{}, r: r}
	go lr.decode(rd, done)
	return lr
}

func (lr *lineReader[T]) decode(rd io.Reader, done <-chan struct{}) {
	defer close(lr.items)
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	line := 0
	for sc.Scan() {
		line++
		it := lineItem[T]{line: line}
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			it.probs = append(it.probs, Problem{File: lr.file, Line: line, Msg: "blank line"})
		} else {
			rec := new(T)
			err := jsonv2.Unmarshal(b, rec)
			var se *jsonv2.SemanticError
			if err != nil {
				path, msg := decodeProblem(err)
				it.probs = append(it.probs, Problem{File: lr.file, Line: line, Path: path, Msg: msg})
			}
			if err == nil || errors.As(err, &se) { // after a type error the rest may still match
				if u := lr.uuidOf(rec); u == nil || *u == "" {
					it.probs = append(it.probs, Problem{File: lr.file, Line: line, Path: "uuid", Msg: "missing or empty"})
				} else {
					it.rec, it.uuid = rec, *u
				}
			}
		}
		select {
		case lr.items <- it:
		case <-done:
			return
		}
	}
	if err := sc.Err(); err != nil {
		lr.err = fmt.Errorf("%s: line %d: %w", lr.file, line+1, err)
	}
}

// next returns the next line with a uuid; the problems of the lines before it are recorded.
func (lr *lineReader[T]) next() (*T, string, int, bool) {
	for it := range lr.items {
		for _, p := range it.probs {
			lr.r.problem(p)
		}
		if it.rec != nil {
			return it.rec, it.uuid, it.line, true
		}
	}
	return nil, "", 0, false
}

// find returns the line of the sample with uuid u, reading ahead and holding other lines.
func (lr *lineReader[T]) find(u string) (*T, int, bool) {
	if h, ok := lr.pending[u]; ok {
		delete(lr.pending, u)
		return h.rec, h.line, true
	}
	for {
		rec, ru, n, ok := lr.next()
		if !ok {
			return nil, 0, false
		}
		if ru == u {
			return rec, n, true
		}
		if h, dup := lr.pending[ru]; dup {
			lr.r.problem(Problem{File: lr.file, Line: n, Path: "uuid", Msg: fmt.Sprintf("%s already has line %d", ru, h.line)})
			continue
		}
		lr.pending[ru] = heldLine[T]{rec, n}
	}
}

// rest reports the lines that matched no sample.
func (lr *lineReader[T]) rest(known map[string]bool) error {
	report := func(u string, n int) {
		msg := "uuid " + u + " is not a sample of " + MainFile
		if known[u] {
			msg = "second line for the sample with uuid " + u
		}
		lr.r.problem(Problem{File: lr.file, Line: n, Path: "uuid", Msg: msg})
	}
	held := make([]heldLine[T], 0, len(lr.pending))
	for _, h := range lr.pending {
		held = append(held, h)
	}
	slices.SortFunc(held, func(a, b heldLine[T]) int { return a.line - b.line })
	for _, h := range held {
		report(*lr.uuidOf(h.rec), h.line)
	}
	for {
		rec, u, n, ok := lr.next()
		if !ok {
			return lr.err
		}
		_ = rec
		report(u, n)
	}
}
