// Package session holds the types of an annotation session, shared by the store that keeps
// them and the screens that show them: where an item stands in a queue, what is shown of
// it, the state of one annotator's label, and the description of a write and of an undo.
// It also declares what the annotator's and the adjudicator's screens need of storage
// (Queue, AdjudicationStore): the screens import this package, never the store, and a
// storage backend implements these interfaces. It imports neither SQL nor UI.
package session

import (
	"errors"
	"time"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
)

// ErrRefused marks a write the database refuses for good. Waiting and retrying cannot clear
// it: a PostgreSQL role lost its INSERT or UPDATE privilege, or a SQLite file became
// read-only or was moved away. A storage backend wraps its error with it, so that a screen,
// which never imports the store, stops retrying and says the change is not saved rather
// than that it will land.
var ErrRefused = errors.New("the database refuses this annotator's writes")

// Ref locates an item in a queue. Ordering is (Episode, Turn) for items not skipped, then
// SkipSeq for skipped ones, which form the end of the queue.
type Ref struct {
	TurnID  int64
	Episode int64
	Turn    int
	SkipSeq int64 // 0: not skipped
}

// ContextTurn is an earlier turn of the episode, shown above the current one.
type ContextTurn struct {
	Turn           int
	ActionType     string
	UserMessage    string
	VLMResponse    string
	ExpectedAnswer string
}

// Item is everything the annotator shows for one queue entry.
type Item struct {
	Ref     Ref
	Turn    dataset.Turn
	Earlier []ContextTurn
	// Annotation is this annotator's own, nil before the first change. Nothing of other
	// annotators or of automatic judges is ever loaded here: annotation is blind.
	Annotation *Annotation
}

// Annotation is the state of one annotator's label of one turn.
type Annotation struct {
	ID         int64
	Values     rubric.Values
	Status     dataset.Status
	Flagged    bool
	FlagReason string
	Active     time.Duration
	CanUndo    bool
	SkipSeq    int64 // where the item stands among the skipped ones; 0 when not skipped
}

// Done reports whether the label is submitted.
func (a *Annotation) Done() bool { return a != nil && a.Status == dataset.StatusDone }

// Edit describes the circumstances of one annotator write.
type Edit struct {
	TurnID        int64
	RubricVersion string
	// Active is active time spent on the item since the last write, added to its total.
	Active time.Duration
	// Acceptable tells whether values may stay submitted; a write that makes a done item
	// unacceptable turns it back into a draft in the same undoable step. Nil accepts all.
	// Callers pass the rubric's submit rule (rubric.Submittable).
	Acceptable func(rubric.Values) bool
	// Key names this write so that it can be retried: when a COMMIT's reply is lost, the
	// write may have landed or not, and a retry of a write whose key the store has already
	// recorded changes nothing (an undo undoes one batch, not two). Empty: no such guard.
	Key string
}

// ChangeKind is what one recorded change touched.
type ChangeKind string

// The kinds of change an undo can revert.
const (
	ChangeValue  ChangeKind = "value"
	ChangeFlag   ChangeKind = "flag"
	ChangeStatus ChangeKind = "status"
)

// Undone says what an undo reverted.
type Undone struct {
	Kind  ChangeKind
	Field string // the rubric field of a ChangeValue
}
