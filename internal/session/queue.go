package session

import (
	"context"
	"time"
)

// Queue is one annotator's queue, as the annotate screen reads and writes it. It is declared
// here, beside the types it speaks in, so that the screens (tui) depend on this list and not
// on a backend. *store.Queue implements it (asserted in internal/store), and a second
// backend implements the same list.
type Queue interface {
	// Annotator is whose queue this is; Campaign the campaign it belongs to, "" outside one.
	Annotator() string
	Campaign() string
	Len(ctx context.Context) (int, error)
	Progress(ctx context.Context) (done, flagged int, err error)
	// MedianActive is the median active time of the annotator's submitted items (all of
	// them, not only this queue's); ok is false when there is none.
	MedianActive(ctx context.Context) (median time.Duration, ok bool, err error)
	// First, Next and Prev walk the queue; ok is false past either end. With unfinished,
	// submitted items are passed over.
	First(ctx context.Context, unfinished bool) (ref Ref, ok bool, err error)
	Next(ctx context.Context, ref Ref, unfinished bool) (next Ref, ok bool, err error)
	Prev(ctx context.Context, ref Ref) (prev Ref, ok bool, err error)
	// Position is the 1-based place of ref in the queue, skipped items last. It may be
	// slow on a long queue: callers run it off the key-press path.
	Position(ctx context.Context, ref Ref) (int, error)
	// Find locates a sample by its id; ok is false when it is not in this queue.
	Find(ctx context.Context, sampleID string) (ref Ref, ok bool, err error)
	Load(ctx context.Context, ref Ref) (*Item, error)
	// SetValue (nil clears the field), Submit, SetFlag and Skip (to the end of the queue)
	// each make one undoable write and return the annotation as it now stands.
	SetValue(ctx context.Context, e Edit, field string, value *string) (*Annotation, error)
	Submit(ctx context.Context, e Edit) (*Annotation, error)
	SetFlag(ctx context.Context, e Edit, flagged bool, reason string) (*Annotation, error)
	Skip(ctx context.Context, e Edit) (*Annotation, error)
	// AddActive adds active time to an annotation that exists; it creates none.
	AddActive(ctx context.Context, e Edit) error
	// Undo reverts the latest write not yet undone; ok is false when there is none.
	Undo(ctx context.Context, e Edit) (a *Annotation, undone []Undone, ok bool, err error)
}
