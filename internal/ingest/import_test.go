package ingest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/ingest"
)

// commitFailSink stores every turn of a batch and then fails, as the store's Importer does
// when the COMMIT of its chunk fails after the writes (a full disk, an interrupt).
type commitFailSink struct{ err error }

func (s commitFailSink) PutTurns(ts []dataset.Turn) ([]int64, []dataset.Outcome, error) {
	ids := make([]int64, len(ts))
	outs := make([]dataset.Outcome, len(ts))
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	return ids, outs, s.err
}

func (commitFailSink) PutLabel(int64, *dataset.Label) (dataset.Outcome, error) {
	return dataset.Inserted, nil
}

// TestImportCommitFailsAfterEveryTurn: an error that comes after every turn of a full batch
// was written names the file and is returned, not a panic (index out of range [256]).
func TestImportCommitFailsAfterEveryTurn(t *testing.T) {
	var src strings.Builder
	for i := range 300 {
		src.WriteString(strings.Replace(turnLine, "turn_3", "turn_"+itoa(i+1), 1) + "\n")
	}
	diskFull := errors.New("database or disk is full")
	_, err := ingest.Import(context.Background(), commitFailSink{diskFull}, "big.jsonl", strings.NewReader(src.String()), ingest.LabelOptions{})
	if !errors.Is(err, diskFull) || !strings.HasPrefix(err.Error(), "big.jsonl: ") {
		t.Fatalf("err = %v, want big.jsonl: %v", err, diskFull)
	}
}
