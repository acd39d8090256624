package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// FuzzLabeledRoundTrip: whatever labeled record the importer accepts, its export imports into
// a fresh database and exports again byte for byte the same (values, NA, unanswered fields,
// drafts, stale marks, flags, times), and importing the export back into the first database
// changes nothing. The record is built from the fuzzer's choices: per rubric field absent,
// null, "NA" or a value (allowed or not), the turn's action and number, the label's state.
func FuzzLabeledRoundTrip(f *testing.F) {
	f.Add([]byte{3, 4, 2, 2, 5, 9}, uint8(2), uint8(2), uint8(0), false, false, "", "fine", 12.5, "")
	f.Add([]byte{1, 1, 1, 1, 1, 1}, uint8(0), uint8(1), uint8(1), true, false, "blurry", "", 0.001, "2026-01-31T09:30:00Z")
	f.Add([]byte{2, 0, 2, 2, 0, 1}, uint8(3), uint8(5), uint8(1), false, true, "", "=1+1", 1e7, "")
	f.Add([]byte{7, 7, 3, 3, 7, 3}, uint8(4), uint8(9), uint8(2), true, true, "why", "天空\n", 31536000.0, "2026-02-29T00:00:00+08:00")
	r := storetest.Rubric(f)
	actions := []string{"initial", "follow_up", "mislead", "mislead_subtle", "memory_injection", "logic_skip"}
	f.Fuzz(func(t *testing.T, choices []byte, action, turnN, status uint8, flagged, stale bool, reason, comment string, active float64, at string) {
		label := map[string]any{}
		for i := range r.Fields {
			fd := &r.Fields[i]
			c := byte(0)
			if i < len(choices) {
				c = choices[i]
			}
			switch {
			case c == 0:
			case c == 1:
				label[fd.Name] = nil
			case c == 2:
				label[fd.Name] = "NA"
			case fd.Kind == rubric.KindScale:
				label[fd.Name] = int(c) - 2 // 1..5 and out of range
			case fd.Kind == rubric.KindChoice:
				label[fd.Name] = []string{"Yes", "No", "yes", "maybe"}[int(c)%4]
			default:
				label[fd.Name] = comment
			}
		}
		label["status"] = []string{"done", "draft", "", "other"}[status%4]
		label["flagged"] = flagged
		if reason != "" {
			label["flag_reason"] = reason
		}
		if stale {
			label["stale"] = true
		}
		if !math.IsNaN(active) && !math.IsInf(active, 0) {
			label["active_seconds"] = active
		}
		if at != "" {
			label["annotated_at"] = at
		}
		rec := map[string]any{"sample_id": fmt.Sprintf("ep_turn_%d", 1+int(turnN)%12), "action_type": actions[int(action)%len(actions)],
			"task_type": "t", "user_message": "u", "vlm_response": "v", "expected_answer": "e", "human_annotation": label}
		src, err := json.Marshal(rec)
		if err != nil {
			return
		}
		dir := t.TempDir()
		db1 := filepath.Join(dir, "a.db")
		if _, err := importBytes(t, db1, r, src); err != nil {
			if !strings.HasPrefix(err.Error(), "in.jsonl:1: human_annotation") {
				t.Fatalf("import failed without a file:line:field error: %v\n%s", err, src)
			}
			return
		}
		e1 := exportBytes(t, db1, r)
		db2 := filepath.Join(dir, "b.db")
		if _, err := importBytes(t, db2, r, e1); err != nil {
			t.Fatalf("the export does not import: %v\n%s\nexported from\n%s", err, e1, src)
		}
		if e2 := exportBytes(t, db2, r); !bytes.Equal(e1, e2) {
			t.Fatalf("round trip differs:\n%s\n%s\nfrom %s", e1, e2, src)
		}
		c, err := importBytes(t, db1, r, e1)
		if err != nil || c.Turns[0]+c.Turns[2]+c.Labels[0]+c.Labels[2] != 0 {
			t.Fatalf("the export imported back changed the database: %v %v\n%s", c, err, e1)
		}
	})
}

func importBytes(tb testing.TB, db string, r *rubric.Rubric, src []byte) (ingest.Counts, error) {
	return importFrom(tb, db, r, "in.jsonl", bytes.NewReader(src), time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
}

// importFrom imports one file's records, as m3eval import does, into the database at db.
func importFrom(tb testing.TB, db string, r *rubric.Rubric, name string, rd io.Reader, now time.Time) (ingest.Counts, error) {
	tb.Helper()
	return importSource(tb, db, r, name, ingest.NewReader(name, rd), now)
}

func exportBytes(tb testing.TB, db string, r *rubric.Rubric) []byte {
	tb.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, db, store.Options{ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	var b bytes.Buffer
	lw, err := render.NewLabeledWriter(&b, render.LabeledOptions{Format: "jsonl", Rubric: r})
	if err != nil {
		tb.Fatal(err)
	}
	o := store.ExportOptions{IncludeDrafts: true}
	if err := s.Export(ctx, o, func(l *dataset.Labeled) error { return lw.Write(l) }); err != nil {
		tb.Fatal(err)
	}
	if err := lw.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}
