package ingest_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/rubric"
)

// endless is a score file's head followed by an endless cell: without a limit the reader
// would never return (or take all memory first).
type endless struct {
	head string
	fill byte
}

func (e *endless) Read(p []byte) (int, error) {
	n := copy(p, e.head)
	e.head = e.head[n:]
	for i := n; i < len(p); i++ {
		p[i] = e.fill
	}
	return len(p), nil
}

// TestReadScoresLimits (#38 item 4): import-scores reads within import's limits. An endless
// CSV cell or JSON string fails at --max-record-size, a cell past --max-cell-size fails, and
// the message quotes a short prefix of the value, never the whole of it.
func TestReadScoresLimits(t *testing.T) {
	r, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	read := func(rd io.Reader, lim ingest.Limits) error {
		return ingest.ReadScoresWith("s", rd, r, nil, lim, func(*ingest.ScoreRecord) error { return nil })
	}
	for name, rd := range map[string]io.Reader{
		"csv":  &endless{head: "sample_id,correctness\na,\"", fill: 'x'},
		"json": &endless{head: "{\"sample_id\": \"a\", \"correctness\": \"", fill: 'x'},
	} {
		err := read(rd, ingest.Limits{MaxRecord: 1 << 20})
		if !errors.Is(err, ingest.ErrLimit) || !strings.Contains(err.Error(), "--max-record-size 1MB") || len(err.Error()) > 300 {
			t.Errorf("%s: endless value: %.500v", name, err)
		}
	}
	big := strings.Repeat("7", 5000)
	for name, body := range map[string]string{
		"csv":  "sample_id,correctness\na," + big + "\n",
		"json": `{"sample_id": "a", "correctness": "` + big + `"}`,
		"id":   "sample_id,correctness\n" + big + ",3\n",
	} {
		err := read(strings.NewReader(body), ingest.Limits{MaxCell: 4096})
		if !errors.Is(err, ingest.ErrLimit) || !strings.Contains(err.Error(), "longer than --max-cell-size 4KB") ||
			!strings.Contains(err.Error(), "(5000 bytes)") || len(err.Error()) > 300 {
			t.Errorf("%s: a 5000-byte value: %v", name, err)
		}
		if err := read(strings.NewReader(body), ingest.Limits{MaxCell: 8192}); err != nil {
			t.Errorf("%s: within the limit: %v", name, err)
		}
	}
	// A value the reader rejects is quoted short too.
	err = read(strings.NewReader(`{"sample_id": "a", "correctness": [`+big+`]}`), ingest.Limits{})
	if err == nil || len(err.Error()) > 300 || !strings.Contains(err.Error(), "bytes)") {
		t.Errorf("a bad value: %.500v", err)
	}
}

// TestReadScoresRefusesDuplicateKeys: a key given twice in one object is refused, as import
// refuses it, rather than the last value winning silently.
func TestReadScoresRefusesDuplicateKeys(t *testing.T) {
	for _, body := range []string{
		`{"sample_id": "a", "correctness": 4, "correctness": 1}`,
		`[{"sample_id": "a", "correctness": 4}, {"sample_id": "b", "sample_id": "c", "correctness": 1}]`,
	} {
		_, err := readScores(t, body)
		if err == nil || !strings.Contains(err.Error(), "given twice") {
			t.Errorf("%s: %v", body, err)
		}
	}
}
