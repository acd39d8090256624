// Package dataset holds the records m3eval moves around: a conversation turn as the benchmark
// logged it, and a label an annotator (or an importer on their behalf) gave it. It is the
// vocabulary shared by the importers, the store and the exporters.
package dataset

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"github.com/go-json-experiment/json/jsontext"
	"time"

	"github.com/m3bench/m3eval/internal/rubric"
)

// Turn is one turn of a multi-turn VLM conversation.
type Turn struct {
	SampleID       string
	EpisodeID      string
	Turn           int // 1-based
	ActionType     string
	TaskType       string
	UserMessage    string
	VLMResponse    string
	ExpectedAnswer string
	Images         []string
	Model          string
	// Meta is the record's "meta" object exactly as it was given (nil when absent).
	Meta json.RawMessage
	// Sum caches Hash; readers fill it on their own goroutine so the writer does not have to.
	Sum []byte
	// Omitted marks optional fields the record left out, as labeled samples in the guide's
	// format do: re-importing such a record keeps the stored values instead of clearing them.
	Omitted Omitted
}

// Omitted lists the optional turn fields a record did not give.
type Omitted struct{ Images, Model, Meta bool }

// Item is what the rubric's rules need to know about the turn.
func (t *Turn) Item() rubric.Item { return rubric.Item{ActionType: t.ActionType, Turn: t.Turn} }

// ContentHash is Sum when a reader filled it, Hash otherwise.
func (t *Turn) ContentHash() []byte {
	if t.Sum != nil {
		return t.Sum
	}
	return t.Hash()
}

// Hash identifies the turn's content, so a re-import can tell an identical record from a
// changed one without comparing every column. Meta's layout is not content: whitespace, and
// how its strings are escaped ("\u4f1e" or "伞", as Python's json.dump writes by default or
// not), hash the same.
func (t *Turn) Hash() []byte { return t.hash(true) }

// LegacyHash is Hash as it was before meta's string escapes were read as their characters:
// the hash a database stored for a meta written with escapes. A re-import of that same file
// compares against it too, so it stays unchanged.
func (t *Turn) LegacyHash() []byte { return t.hash(false) }

func (t *Turn) hash(unescape bool) []byte {
	// One buffer and one Sum256: the streaming hash.Hash copied every string it was given.
	n := 8*11 + len(t.SampleID) + len(t.EpisodeID) + len(t.ActionType) + len(t.TaskType) +
		len(t.UserMessage) + len(t.VLMResponse) + len(t.ExpectedAnswer) + len(t.Model) + len(t.Meta)
	for _, im := range t.Images {
		n += 8 + len(im)
	}
	b := make([]byte, 0, n)
	put := func(s string) {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
		b = append(b, s...)
	}
	put(t.SampleID)
	put(t.EpisodeID)
	b = binary.LittleEndian.AppendUint64(b, uint64(t.Turn))
	put(t.ActionType)
	put(t.TaskType)
	put(t.UserMessage)
	put(t.VLMResponse)
	put(t.ExpectedAnswer)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(t.Images)))
	for _, im := range t.Images {
		put(im)
	}
	put(t.Model)
	// Layout is not content: the same meta pretty-printed or compact hashes the same.
	lenAt := len(b)
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = appendCompact(b, t.Meta)
	if unescape {
		b = unescapeStrings(b, lenAt+8)
	}
	binary.LittleEndian.PutUint64(b[lenAt:], uint64(len(b)-lenAt-8))
	sum := sha256.Sum256(b)
	return sum[:16]
}

// appendCompact appends meta without its insignificant whitespace, as encoding/json's
// Compact writes it, or as it is when Compact rejects it. Compact's byte-by-byte scanner was
// a third of Hash's time on an import: a meta without any whitespace byte is its own compact
// form (valid or not, the bytes appended are the same), and one with whitespace goes through
// jsontext's faster Compact, which keeps strings and numbers as written, as encoding/json's
// does. Whatever jsontext refuses goes to encoding/json, whose verdict stands
// (TestAppendCompactMatchesEncodingJSON).
func appendCompact(b []byte, meta []byte) []byte {
	if !bytes.ContainsAny(meta, " \t\r\n") {
		return append(b, meta...)
	}
	start := len(b)
	v := jsontext.Value(append(b, meta...)[start:])
	if v.Compact() == nil {
		return append(b[:start], v...)
	}
	var buf bytes.Buffer
	buf.Grow(len(meta))
	if json.Compact(&buf, meta) != nil {
		return append(b[:start], meta...)
	}
	return append(b[:start], buf.Bytes()...)
}

// unescapeStrings rewrites the compact JSON in b[from:] with its strings in their shortest
// encoding (jsontext's Format without PreserveRawStrings: "\u4f1e" becomes "伞", "\/" "/"),
// keys and numbers as they are. Only a value with a backslash can change, so every other meta
// hashes as it always did; one jsontext refuses stays as it is.
func unescapeStrings(b []byte, from int) []byte {
	if bytes.IndexByte(b[from:], '\\') < 0 {
		return b
	}
	v := jsontext.Value(bytes.Clone(b[from:]))
	if v.Compact(jsontext.PreserveRawStrings(false), jsontext.AllowInvalidUTF8(false)) != nil {
		return b
	}
	return append(b[:from], v...)
}

// Outcome says what storing a record did. Outcomes index per-outcome counts ([3]int).
type Outcome int

// The outcomes of storing a record.
const (
	Inserted  Outcome = iota // new
	Unchanged                // identical to what was stored
	Replaced                 // differed, and the import was told to replace
)

// Status is where an annotation stands: a draft or submitted.
type Status string

// The statuses of an annotation (the annotations.status column).
const (
	StatusDraft Status = "draft" // started, not submitted
	StatusDone  Status = "done"  // submitted complete
)

// Label is one annotator's answers for one turn.
type Label struct {
	Annotator   string
	Values      rubric.Values
	Status      Status
	AnnotatedAt time.Time // submission time; last change for drafts
	// StampedNow says AnnotatedAt is the importer's clock, the record having given no time: a
	// re-import of the same record later is the same label, not a different one.
	StampedNow    bool
	ActiveSeconds float64
	RubricVersion string
	Flagged       bool
	FlagReason    string
	// Stale marks a label made on earlier content of a turn that a later import replaced: a
	// draft until the annotator confirms it again.
	Stale bool
	// Final, set only on the final labels of export --final, says where the values came from.
	Final *FinalInfo
}

// FinalInfo says where a final label's values came from. Source is "adjudicated" (an
// adjudicator decided a field), "agreed" or "single" (one annotator). Fields gives it per
// field ("adjudicated:alice" when the adjudicator took alice's answer).
type FinalInfo struct {
	Source      string
	Fields      map[string]string
	Adjudicator string
}

// Labeled is a turn with its labels, in annotator-name order. It is the unit of export.
type Labeled struct {
	Turn   Turn
	Labels []Label
}
