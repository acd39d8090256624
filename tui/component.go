package tui

import (
	"context"
	"time"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/store"
)

// Component is a screen or a pane: a model with its own keys and a size given by its parent
// after the parent took its own frame (soft-serve pkg/ui/common/component.go).
type Component interface {
	tea.Model
	help.KeyMap
	SetSize(width, height int)
}

// Screen is a component the root model routes to. A new screen (adjudication, a server's
// session picker) is one file implementing it.
type Screen interface {
	Component
	// Header is the screen's part of the header line: where the user is (left, after
	// "m3eval · ") and the state of their work (right edge).
	Header(width int) (left, right string)
	// CapturesKeys reports whether a text box has focus: then every key is the screen's,
	// and "?" or "q" are letters, not the root's keys.
	CapturesKeys() bool
	// Reference is what the help screen shows below the keys (a guide, a score table).
	Reference(width int) string
}

// Queue is what the annotate screen needs from storage: one annotator's queue, read and
// written through typed calls. *store.Queue satisfies it; the screen never sees SQL.
type Queue interface {
	Annotator() string
	Campaign() string // "" outside a campaign
	Len(ctx context.Context) (int, error)
	Progress(ctx context.Context) (done, flagged int, err error)
	MedianActive(ctx context.Context) (time.Duration, bool, error)
	First(ctx context.Context, unfinished bool) (session.Ref, bool, error)
	Next(ctx context.Context, ref session.Ref, unfinished bool) (session.Ref, bool, error)
	Prev(ctx context.Context, ref session.Ref) (session.Ref, bool, error)
	Position(ctx context.Context, ref session.Ref) (int, error)
	Find(ctx context.Context, sampleID string) (session.Ref, bool, error)
	Load(ctx context.Context, ref session.Ref) (*session.Item, error)
	SetValue(ctx context.Context, e session.Edit, field string, value *string) (*session.Annotation, error)
	Submit(ctx context.Context, e session.Edit) (*session.Annotation, error)
	SetFlag(ctx context.Context, e session.Edit, flagged bool, reason string) (*session.Annotation, error)
	Skip(ctx context.Context, e session.Edit) (*session.Annotation, error)
	AddActive(ctx context.Context, e session.Edit) error
	Undo(ctx context.Context, e session.Edit) (*session.Annotation, []session.Undone, bool, error)
}

var _ Queue = (*store.Queue)(nil)
