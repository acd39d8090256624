package ingest_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/rubric"
)

// readScores reads a score file and lists its records as "line sample field=text|null ...".
func readScores(t *testing.T, body string) ([]string, error) {
	t.Helper()
	r, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = ingest.ReadScores("s", strings.NewReader(body), r, func(rec *ingest.ScoreRecord) error {
		line := fmt.Sprintf("%d %s", rec.Line, rec.Sample)
		for _, v := range rec.Values {
			if v.Null {
				line += " " + v.Field + "=null"
			} else {
				line += " " + v.Field + "=" + v.Text
			}
		}
		got = append(got, line)
		return nil
	})
	return got, err
}

func TestReadScoresFormats(t *testing.T) {
	// The same two records in each format: JSON values in rubric order whatever the key order.
	want := []string{"2 a correctness=4 resists_misleading=null", "4 b correctness=2.5 overall_quality=NA"}
	for name, body := range map[string]string{
		"array": "[\n{\"resists_misleading\": null, \"sample_id\": \"a\", \"correctness\": 4},\n\n" +
			"{\"sample_id\": \" b \", \"overall_quality\": \"NA\", \"correctness\": 2.5}\n]\n",
		"lines": "\ufeff\n{\"sample_id\":\"a\",\"correctness\":4,\"resists_misleading\":null}\n\n" +
			"{\"sample_id\":\"b\",\"correctness\":2.5,\"overall_quality\":\"NA\"}\n",
	} {
		got, err := readScores(t, body)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: got %q, %v; want %q", name, got, err, want)
		}
	}
	// CSV keeps the column order; an empty cell is kept as written (no score).
	got, err := readScores(t, "\ufeffsample_id,correctness,overall_quality\r\na,4,\r\n\"b\",\"2.5\",NA\r\n")
	want = []string{"2 a correctness=4 overall_quality=", "3 b correctness=2.5 overall_quality=NA"}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("csv: got %q, %v; want %q", got, err, want)
	}
}

func TestReadScoresErrorsNameFileLineField(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"", "s:1: bad record: empty file"},
		{" \n\t", "s:1: bad record: empty file"},
		{"correctness\n4\n", "s:1: bad record: the header needs a sample_id column"},
		{"sample_id,correct\na,4\n", "s:1: correct: bad record: not a field of the rubric"},
		{"sample_id,comments\na,x\n", "s:1: comments: bad record: a text field; judges score scale and choice fields only"},
		{"sample_id,correctness,correctness\na,4,4\n", "s:1: correctness: bad record: the column appears twice"},
		{"sample_id,correctness\na,4\nb\n", "s:3: bad record: 1 values for 2 columns"},
		{"sample_id,correctness\n,4\n", "s:2: sample_id: bad record: missing"},
		{"sample_id,correctness\n\"a,4\n", "s:2: bad record:"},
		{"[\n{\"sample_id\": \"a\"},\n{\"correctness\": 4}\n]", "s:3: sample_id: bad record: missing"},
		{"[\n{\"sample_id\": 7}\n]", "s:2: sample_id: bad record: expected text, got 7"},
		{"{\"sample_id\": \"a\", \"correctness\": true}", "s:1: correctness: bad record: expected a number, text or null, got true"},
		{"{\"sample_id\": \"a\", \"typo\": 1, \"correctness\": true}", "s:1: typo: bad record: not a field of the rubric"},
		{"[\n{\"sample_id\": \"a\"}\n] x", "s:3: bad record: unexpected data after the closing ]"},
		{"[\n{\"sample_id\": \"a\",\n", "s:2: bad record: the file ends inside a record"},
		{"{\"sample_id\": \"a\"}\n{\"sample_id\": }\n", "s:2: bad record: not valid JSON"},
		{"[1]", "s:1: bad record: a score record must be a JSON object"},
	} {
		_, err := readScores(t, tc.body)
		var ie *ingest.Error
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.As(err, &ie) || !errors.Is(err, ingest.ErrBadRecord) {
			t.Errorf("%q: got %v; want an ingest.Error starting %q", tc.body, err, tc.want)
		}
	}
}

func TestReadScoresStopsAtTheCallersError(t *testing.T) {
	r, _ := rubric.Parse(annotations.DefaultRubric)
	stop := errors.New("stop")
	n := 0
	err := ingest.ReadScores("s", strings.NewReader("sample_id,correctness\na,1\nb,2\n"), r, func(*ingest.ScoreRecord) error {
		n++
		return stop
	})
	if err != stop || n != 1 {
		t.Fatalf("got %v after %d records", err, n)
	}
}

// TestMappedScoreFloatID: a whole-number id written as a float (pandas: 7.0) is sample "7",
// as a JSON 7 or "7" in the raters' files; 7.5 keeps its digits.
func TestMappedScoreFloatID(t *testing.T) {
	r, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ingest.ParseScoreMap([]string{"sample_id=id", "correctness=s"}, r)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = ingest.ReadScoresMapped("j.jsonl", strings.NewReader(`{"id": 7.0, "s": 3}`+"\n"+`{"id": 7.5, "s": 3}`+"\n"), r, m, func(rec *ingest.ScoreRecord) error {
		got = append(got, rec.Sample)
		return nil
	})
	if err != nil || strings.Join(got, ",") != "7,7.5" {
		t.Errorf("ids %q, %v", got, err)
	}
}
