package session

import (
	"context"

	"github.com/m3bench/m3eval/internal/campaign"
)

// FinalEdit is one adjudication write: the final value of one field of a turn. A nil Value
// clears it. The value is taken from the annotator Source, or scored anew when Source is "".
type FinalEdit struct {
	TurnID        int64
	Field         string
	Value         *string
	Source        string
	Adjudicator   string
	RubricVersion string
	// Key names the write the screen may retry after a lost COMMIT reply (as Edit.Key):
	// a write whose key the store already holds is not applied again. Empty: unkeyed.
	Key string
}

// AdjudicationStore is what the adjudication screen needs of storage. *store.Store
// implements it (asserted in internal/store).
type AdjudicationStore interface {
	// LoadTurn reads a turn with its episode's earlier turns, as the annotator shows it,
	// without any annotation.
	LoadTurn(ctx context.Context, turnID int64) (*Item, error)
	// SetFinal records final values in one transaction, all or none.
	SetFinal(ctx context.Context, edits ...FinalEdit) error
	// UndoFinal reverts the turn's latest adjudication change not yet undone and names its
	// field; ok is false when there is none. A key the store already holds names an undo that
	// landed: it names the field it undid and undoes nothing more.
	UndoFinal(ctx context.Context, turnID int64, adjudicator, rubricVersion, key string) (field string, ok bool, err error)
	// Finals reads every adjudicated value, by sample_id and field.
	Finals(ctx context.Context) (map[string]map[string]campaign.Decision, error)
}
