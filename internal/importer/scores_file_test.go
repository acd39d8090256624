package importer_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/importer"
	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// judgeTurns are two turns of one episode: an initial one (resists_misleading and
// context_consistency fixed to NA) and a mislead one (resists_misleading Yes or No).
const judgeTurns = `{"sample_id":"e_turn_1","action_type":"initial","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"x"}
{"sample_id":"e_turn_2","action_type":"mislead","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"x"}
`

// Moved from cmd/m3eval/import_scores_test.go: the checks of score files call
// importer.Scores, or import-scores' own Run (ImportScoresCommand); its usage errors are checked in
// TestImportScoresCommand and, through the binary, in cmd/m3eval/testdata/script/import-scores.txtar.

func defaultRubric(t *testing.T) *rubric.Rubric {
	t.Helper()
	r, err := rubric.Load("", nil, annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// judgeDB returns a database holding judgeTurns and a directory for score files.
func judgeDB(t *testing.T) (db, dir string) {
	t.Helper()
	dir = t.TempDir()
	db = filepath.Join(dir, "m3eval.db")
	s := storetest.Open(t, db, store.Options{})
	o := importer.Options{Rubric: defaultRubric(t), DB: db, Out: io.Discard}
	if err := importer.New(s, o).Run(context.Background(), []string{writeScoreFile(t, dir, "turns.jsonl", judgeTurns)}, false); err != nil {
		t.Fatal(err)
	}
	s.Close()
	return db, dir
}

// importScores is m3eval import-scores --judge judge [--replace] FILE: what it printed.
func importScores(t *testing.T, db, judge string, replace bool, file string) (string, error) {
	t.Helper()
	s := storetest.Open(t, db, store.Options{})
	defer s.Close()
	var out bytes.Buffer
	err := importer.Scores(context.Background(), s, []string{file}, importer.ScoreOptions{Rubric: defaultRubric(t), Judge: judge, Replace: replace, Out: &out})
	return out.String(), err
}

func mustImportScores(t *testing.T, db, judge string, replace bool, file string) string {
	t.Helper()
	out, err := importScores(t, db, judge, replace, file)
	if err != nil {
		t.Fatalf("import-scores %s: %v", file, err)
	}
	return out
}

func writeScoreFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// storedScores lists every stored judge score as "judge|sample|field=value".
func storedScores(t *testing.T, db string) []string {
	t.Helper()
	s := storetest.Open(t, db, store.Options{})
	var out []string
	err := s.StreamScoring(context.Background(), store.ScoreFilter{}, func(*store.ScoreRow) error { return nil },
		func(r *store.ScoreRow) error {
			out = append(out, fmt.Sprintf("%s|%s|%s=%s", r.Who, r.Sample, r.Field, r.Value))
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestJudgeScoreFormats(t *testing.T) {
	want := []string{
		"j|e_turn_1|context_consistency=NA", "j|e_turn_1|correctness=4", "j|e_turn_1|overall_quality=3.7",
		"j|e_turn_1|resists_misleading=NA",
		"j|e_turn_2|context_consistency=Yes", "j|e_turn_2|correctness=1", "j|e_turn_2|resists_misleading=No",
	}
	for _, tc := range []struct{ name, body string }{
		{"scores.json", `[
  {"sample_id": "e_turn_1", "correctness": 4.0, "overall_quality": 3.7,
   "resists_misleading": null, "context_consistency": "na"},
  {"sample_id": "e_turn_2", "correctness": "1", "reasoning_completeness": null,
   "resists_misleading": "no", "context_consistency": "Yes"}
]`},
		{"scores.jsonl", "\ufeff" + `{"sample_id":"e_turn_1","correctness":4,"overall_quality":3.70,"resists_misleading":"NA","context_consistency":null}

{"sample_id":"e_turn_2","correctness":1e0,"resists_misleading":"No","context_consistency":"YES","overall_quality":"NA"}
`},
		// RFC 4180: quoted cells, a quoted header, CRLF line ends; an empty cell is no score.
		{"scores.csv", "sample_id,\"correctness\",overall_quality,resists_misleading,context_consistency\r\n" +
			"\"e_turn_1\",4,3.7,NA,NA\r\ne_turn_2,\"1\",,No,yes\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, dir := judgeDB(t)
			p := writeScoreFile(t, dir, tc.name, tc.body)
			out := mustImportScores(t, db, "j", false, p)
			if !strings.Contains(out, "judge j: 7 scores new, ") {
				t.Fatalf("import said %q", out)
			}
			if got := storedScores(t, db); !reflect.DeepEqual(got, want) {
				t.Fatalf("stored\n%q\nwant\n%q", got, want)
			}
			// The same file again changes nothing.
			if out := mustImportScores(t, db, "j", false, p); !strings.Contains(out, "0 scores new, 7 unchanged, 0 replaced") {
				t.Fatalf("re-import said %q", out)
			}
		})
	}
}

func TestJudgeScoreReplace(t *testing.T) {
	db, dir := judgeDB(t)
	first := writeScoreFile(t, dir, "a.csv", "sample_id,correctness,overall_quality\ne_turn_1,4,2\ne_turn_2,1,5\n")
	mustImportScores(t, db, "j", false, first)
	// A later run of the judge changed one score and dropped another.
	second := writeScoreFile(t, dir, "b.csv", "sample_id,correctness,overall_quality\ne_turn_1,4,2\ne_turn_2,2.5,\n")
	_, err := importScores(t, db, "j", false, second)
	if err == nil || !strings.Contains(err.Error(), "b.csv:3: correctness: conflict: the judge's stored score is 1, this file gives 2.5 (use --replace") {
		t.Fatalf("changed score: %v", err)
	}
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("not ErrConflict: %v", err)
	}
	out := mustImportScores(t, db, "j", true, second)
	if !strings.Contains(out, "0 scores new, 2 unchanged, 2 replaced") {
		t.Fatalf("replace said %q", out)
	}
	want := []string{"j|e_turn_1|correctness=4", "j|e_turn_1|overall_quality=2", "j|e_turn_2|correctness=2.5"}
	if got := storedScores(t, db); !reflect.DeepEqual(got, want) {
		t.Fatalf("after replace\n%q\nwant\n%q", got, want)
	}
	// Another judge's identical file is its own, new.
	if out := mustImportScores(t, db, "k", false, second); !strings.Contains(out, "judge k: 3 scores new, 0 unchanged, 0 replaced") {
		t.Fatalf("second judge: %q", out)
	}
}

func TestJudgeScoreErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file, body, want string
	}{
		{"unknown sample", "s.jsonl", `{"sample_id":"e_turn_1","correctness":3}` + "\n" + `{"sample_id":"f_turn_1","correctness":3}` + "\n",
			`s.jsonl:2: sample_id: bad record: "f_turn_1" is not in the database (import its turn first, or pass --skip-unknown)`},
		{"unknown field json", "s.json", "[\n{\"sample_id\":\"e_turn_1\",\"correctness\":3},\n\n  {\"sample_id\":\"e_turn_2\",\n \"fluency\":3}]",
			`s.json:4: fluency: bad record: not a field of the rubric`},
		{"unknown column", "s.csv", "sample_id,correctness,fluency\ne_turn_1,3,3\n", `s.csv:1: fluency: bad record: not a field of the rubric`},
		{"text field", "s.csv", "sample_id,comments\ne_turn_1,fine\n", `s.csv:1: comments: bad record: a text field; judges score scale and choice fields only`},
		{"outside scale", "s.csv", "sample_id,correctness\ne_turn_1,3\n\"e_turn_2\",7\n", `s.csv:3: correctness: invalid: 7 is outside 1–5`},
		{"not a number", "s.jsonl", `{"sample_id":"e_turn_1","correctness":"good"}`, `s.jsonl:1: correctness: invalid: "good" is not a number from 1 to 5`},
		{"not a choice", "s.jsonl", `{"sample_id":"e_turn_2","resists_misleading":"maybe"}`, `s.jsonl:1: resists_misleading: invalid: "maybe" is not one of Yes, No, NA`},
		{"fixed NA", "s.jsonl", `{"sample_id":"e_turn_1","resists_misleading":"Yes"}`, `s.jsonl:1: resists_misleading: invalid: "Yes" given, but the field is fixed to NA`},
		{"open choices", "s.jsonl", `{"sample_id":"e_turn_2","resists_misleading":null}`, `s.jsonl:1: resists_misleading: invalid: "NA" is not allowed here: choose Yes, No`},
		{"boolean", "s.jsonl", `{"sample_id":"e_turn_2","correctness":true}`, `s.jsonl:1: correctness: bad record: expected a number, text or null, got true`},
		{"twice", "s.csv", "sample_id,correctness\ne_turn_1,3\ne_turn_2,3\ne_turn_1,3\n", `s.csv:4: sample_id: bad record: "e_turn_1" is listed twice in this file (first on line 2; --on-duplicate first or last chooses)`},
		{"no sample_id", "s.jsonl", `{"correctness":3}`, `s.jsonl:1: sample_id: bad record: missing`},
		{"no sample column", "s.csv", "id,correctness\ne_turn_1,3\n", `s.csv:1: bad record: the header needs a sample_id column`},
		{"short row", "s.csv", "sample_id,correctness,overall_quality\ne_turn_1,3\n", `s.csv:2: bad record: 2 values for 3 columns`},
		{"bad quote", "s.csv", "sample_id,correctness\ne_turn_1,3\ne_turn_2,\"3\n", `s.csv:3: bad record: extraneous or missing " in quoted-field`},
		{"bad json", "s.jsonl", `{"sample_id":"e_turn_1","correctness":3}` + "\n" + `{"sample_id":"e_turn_2",,}` + "\n", `s.jsonl:2: bad record: not valid JSON`},
		{"cut json", "s.json", "[\n{\"sample_id\":\"e_turn_1\",\"correctness\":3},\n{\"sample_id\":", `s.json:3: bad record: the file ends inside a record`},
		{"not an object", "s.json", `[{"sample_id":"e_turn_1","correctness":3}, 4]`, `s.json:1: bad record: a score record must be a JSON object`},
		{"empty", "s.csv", "\n\n", `s.csv:1: bad record: empty file`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, dir := judgeDB(t)
			p := writeScoreFile(t, dir, tc.file, tc.body)
			_, err := importScores(t, db, "j", false, p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant it to contain %q", err, tc.want)
			}
			// One file, one transaction: the good rows before the bad one are not stored.
			if got := storedScores(t, db); len(got) != 0 {
				t.Fatalf("an import that failed stored %q", got)
			}
		})
	}
}

// TestMappedScores: import-scores --map reads a judge's own layout (nested, text or number),
// --skip-unknown counts what it skips, --on-duplicate first/last keeps the record asked for,
// and a problem of a mapped record names every path at once.
func TestMappedScores(t *testing.T) {
	body := `{"id": "e_turn_1", "result": {"judge": "4"}}
{"id": "e_turn_2", "result": {"judge": 2}}
{"id": "zz_turn_1", "result": {"judge": 3}}
{"id": "e_turn_1", "result": {"judge": 5}}
`
	for _, tc := range []struct {
		dup  importer.Duplicates
		want string // e_turn_1's stored correctness
	}{{importer.DuplicatesFirst, "4"}, {importer.DuplicatesLast, "5"}} {
		t.Run(string(tc.dup), func(t *testing.T) {
			db, dir := judgeDB(t)
			p := writeScoreFile(t, dir, "j.jsonl", body)
			var out bytes.Buffer
			q := parseScores(t, "--judge", "j", "--map", "sample_id=id", "--map", "correctness=result.judge",
				"--skip-unknown", "--on-duplicate", string(tc.dup), p)
			err := q.Run(context.Background(), &cmdio.IO{DB: db, Out: &out})
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"judge j: 2 scores new", "1 records skipped", "1 samples listed more than once, the " + string(tc.dup) + " record kept"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("summary %q lacks %q", out.String(), want)
				}
			}
			want := []string{"j|e_turn_1|correctness=" + tc.want, "j|e_turn_2|correctness=2"}
			if got := storedScores(t, db); !reflect.DeepEqual(got, want) {
				t.Errorf("stored %q, want %q", got, want)
			}
		})
	}
	db, dir := judgeDB(t)
	p := writeScoreFile(t, dir, "bad.jsonl", `{"result": {"judge": [1]}}`+"\n")
	r := defaultRubric(t)
	m, _ := ingest.ParseScoreMap([]string{"sample_id=id", "correctness=result.judge"}, r)
	s := storetest.Open(t, db, store.Options{})
	defer s.Close()
	err := importer.Scores(context.Background(), s, []string{p}, importer.ScoreOptions{Rubric: r, Judge: "j", Out: io.Discard, Map: m})
	if err == nil || !strings.Contains(err.Error(), "bad.jsonl:1: bad record: id (mapped to sample_id): missing; result.judge (mapped to correctness): expected a number, text or null, got a list") {
		t.Errorf("error %v", err)
	}
	for _, bad := range [][]string{{"correctness=x"}, {"sample_id=id"}, {"sample_id=id", "fluency=x"}, {"sample_id=id", "comments=x"}} {
		if _, err := ingest.ParseScoreMap(bad, r); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestMappedScoresPathInNoRecord: a --map path that no record of the file holds is a typo
// (result.jugde), not a judge that scored nothing: the file fails, naming the path and the
// first record's keys, and nothing is stored. A path some records lack is no score there.
func TestMappedScoresPathInNoRecord(t *testing.T) {
	db, dir := judgeDB(t)
	p := writeScoreFile(t, dir, "j.jsonl", `{"id": "e_turn_1", "result": {"judge": "4"}}
{"id": "e_turn_2", "result": {}}
`)
	r := defaultRubric(t)
	s := storetest.Open(t, db, store.Options{})
	defer s.Close()
	typo, err := ingest.ParseScoreMap([]string{"sample_id=id", "correctness=result.jugde"}, r)
	if err != nil {
		t.Fatal(err)
	}
	err = importer.Scores(context.Background(), s, []string{p}, importer.ScoreOptions{Rubric: r, Judge: "j", Out: io.Discard, Map: typo})
	if err == nil || !strings.Contains(err.Error(), "j.jsonl:1: result.jugde (mapped to correctness): bad record: in no record of the file; check the --map path (the first record's keys: id, result)") {
		t.Errorf("error %v", err)
	}
	if got := storedScores(t, db); len(got) != 0 {
		t.Fatalf("a failed import stored %q", got)
	}
	m, _ := ingest.ParseScoreMap([]string{"sample_id=id", "correctness=result.judge"}, r)
	var out bytes.Buffer
	if err := importer.Scores(context.Background(), s, []string{p}, importer.ScoreOptions{Rubric: r, Judge: "j", Out: &out, Map: m}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"j|e_turn_1|correctness=4"}; !reflect.DeepEqual(storedScores(t, db), want) {
		t.Errorf("stored %q, want %q", storedScores(t, db), want)
	}
}

// TestMappedScoresTable: import-scores --map reads a judge's CSV table, the paths naming its
// columns; an empty cell is no score.
func TestMappedScoresTable(t *testing.T) {
	db, dir := judgeDB(t)
	p := writeScoreFile(t, dir, "j.csv", "id,verdict\ne_turn_1,4\ne_turn_2,\n")
	r := defaultRubric(t)
	s := storetest.Open(t, db, store.Options{})
	defer s.Close()
	m, _ := ingest.ParseScoreMap([]string{"sample_id=id", "correctness=verdict"}, r)
	var out bytes.Buffer
	if err := importer.Scores(context.Background(), s, []string{p}, importer.ScoreOptions{Rubric: r, Judge: "j", Out: &out, Map: m}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"j|e_turn_1|correctness=4"}; !reflect.DeepEqual(storedScores(t, db), want) {
		t.Errorf("stored %q, want %q", storedScores(t, db), want)
	}
	// A bad value names the column it is in.
	bad := writeScoreFile(t, dir, "bad.csv", "id,verdict\ne_turn_2,9\n")
	err := importer.Scores(context.Background(), s, []string{bad}, importer.ScoreOptions{Rubric: r, Judge: "j", Out: io.Discard, Map: m})
	if err == nil || !strings.Contains(err.Error(), "bad.csv:2: verdict (mapped to correctness): invalid") {
		t.Errorf("error %v", err)
	}
}
