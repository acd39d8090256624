package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// TestReplaceKeepsOmittedFields: a changed record that leaves images, model and meta out (as
// labeled samples in the guide's format may) replaces the stored turn's content and keeps
// the stored values of the fields it left out, with the content hash of the turn as stored.
func TestReplaceKeepsOmittedFields(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, "", store.Options{})
	put := func(opts store.ImportOptions, ts ...dataset.Turn) ([]dataset.Outcome, error) {
		t.Helper()
		im, err := s.BeginImport(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer im.Rollback()
		_, outcomes, err := im.PutTurns(ts)
		if err != nil {
			return outcomes, err
		}
		return outcomes, im.Commit()
	}
	first := turn("ep1", 1, "initial")
	first.Images, first.Model, first.Meta = []string{"img/a.png"}, "m", json.RawMessage(`{"language": "en", "seed": 1}`)
	other := turn("ep1", 2, "follow_up")
	if _, err := put(store.ImportOptions{}, first, other); err != nil {
		t.Fatal(err)
	}

	changed := first
	changed.VLMResponse = "a different answer"
	changed.Images, changed.Model, changed.Meta = nil, "", nil
	changed.Omitted = dataset.Omitted{Images: true, Model: true, Meta: true}
	if _, err := put(store.ImportOptions{}, changed, other); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a changed turn without --replace: %v, want a conflict", err)
	}
	outcomes, err := put(store.ImportOptions{Replace: true}, changed, other)
	if err != nil || len(outcomes) != 2 || outcomes[0] != dataset.Replaced || outcomes[1] != dataset.Unchanged {
		t.Fatalf("replacing: outcomes %v, %v", outcomes, err)
	}
	var images, model, meta, response string
	var hash []byte
	err = store.RawDB(s).QueryRowContext(ctx, `SELECT images, model, meta, vlm_response, content_hash FROM turns WHERE sample_id = ?`,
		first.SampleID).Scan(&images, &model, &meta, &response, &hash)
	if err != nil {
		t.Fatal(err)
	}
	want := first
	want.VLMResponse = changed.VLMResponse
	if images != `["img/a.png"]` || model != "m" || meta != string(first.Meta) || response != changed.VLMResponse || !bytes.Equal(hash, want.Hash()) {
		t.Errorf("stored %s %q %s %q %x, want the left-out fields kept and the hash %x", images, model, meta, response, hash, want.Hash())
	}
}
