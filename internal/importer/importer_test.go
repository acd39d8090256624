package importer_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/importer"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

const turns = `{"sample_id":"e_turn_1","episode_id":"e","turn":1,"action_type":"initial","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"x"}
{"sample_id":"e_turn_2","episode_id":"e","turn":2,"action_type":"mislead","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"x","human_annotation":{"annotator":"ann","status":"draft","correctness":4,"resists_misleading":"Yes"}}
`

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestImportTellsWhatItDid(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := storetest.Open(t, filepath.Join(dir, "m3eval.db"), store.Options{})
	var out bytes.Buffer
	o := importer.Options{Rubric: storetest.Rubric(t), DB: s.Path(), Out: &out}
	p := writeFile(t, dir, "turns.jsonl", turns)
	if err := importer.New(s, o).Run(ctx, []string{p}, false); err != nil {
		t.Fatal(err)
	}
	want := p + ": detected format m3eval"
	if !strings.HasPrefix(out.String(), want) || !strings.HasSuffix(out.String(), p+": 2 turns new, 0 unchanged, 0 replaced; 1 labels new, 0 unchanged, 0 replaced\n") {
		t.Fatalf("first import said %q", out.String())
	}
	// A changed turn replaces the stored one; its label is kept as a draft to re-confirm.
	out.Reset()
	changed := writeFile(t, dir, "changed.jsonl", strings.Replace(turns, `"vlm_response":"v","expected_answer":"x","human`, `"vlm_response":"w","expected_answer":"x","human`, 1))
	o.Store.Replace = true
	o.From = "m3eval"
	if err := importer.New(s, o).Run(ctx, []string{changed}, false); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), changed+": 0 turns new, 1 unchanged, 1 replaced; 0 labels new, 1 unchanged, 0 replaced\n"+
		"1 labels were made on earlier content of replaced turns:\n  e_turn_2  ann: kept as a draft to re-confirm (m3eval annotate)\n"; got != want {
		t.Fatalf("replace said\n%q\nwant\n%q", got, want)
	}
	// An empty file says so.
	out.Reset()
	if err := importer.New(s, o).Run(ctx, []string{writeFile(t, dir, "empty.jsonl", "\n")}, false); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "empty.jsonl: no records in the file: imported nothing\n") {
		t.Fatalf("empty file: %q", out.String())
	}
}

func TestImportDemo(t *testing.T) {
	s := storetest.Open(t, "", store.Options{})
	var out bytes.Buffer
	if err := importer.New(s, importer.Options{Rubric: storetest.Rubric(t), DB: s.Path(), Out: &out}).Run(context.Background(), nil, true); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "annotations/demo/episodes.jsonl: 35 turns new, ") {
		t.Fatalf("demo import said %q", out.String())
	}
	// storetest's demo fixture is the same data.
	st, err := s.Status(context.Background())
	demo, err2 := storetest.Demo(t, "").Status(context.Background())
	if err != nil || err2 != nil || st.Turns != demo.Turns || st.Episodes != demo.Episodes {
		t.Fatalf("import --demo %+v, storetest.Demo %+v: %v %v", st, demo, err, err2)
	}
}

func TestMediaDir(t *testing.T) {
	for db, want := range map[string]string{"m3eval.db": "m3eval-media", "/x/team.sqlite": "/x/team-media", "plain": "plain-media"} {
		if got := importer.MediaDir(db); got != want {
			t.Errorf("MediaDir(%q) = %q, want %q", db, got, want)
		}
	}
}

func TestScores(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := storetest.Open(t, "", store.Options{})
	r := storetest.Rubric(t)
	if err := importer.New(s, importer.Options{Rubric: r, From: "m3eval", Out: &bytes.Buffer{}}).Run(ctx, []string{writeFile(t, dir, "t.jsonl", turns)}, false); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	o := importer.ScoreOptions{Rubric: r, Judge: "j", Out: &out, In: strings.NewReader("sample_id,correctness,resists_misleading\ne_turn_1,4,\ne_turn_2,2.5,no\n")}
	if err := importer.Scores(ctx, s, []string{"-"}, o); err != nil {
		t.Fatal(err)
	}
	if out.String() != "stdin: judge j: 3 scores new, 0 unchanged, 0 replaced\n" {
		t.Fatalf("scores said %q", out.String())
	}
	// A bad file writes nothing: the good first record is rolled back with it.
	for body, want := range map[string]string{
		"sample_id,overall_quality\ne_turn_1,3\ne_turn_9,3\n":            `bad.csv:3: sample_id: bad record: "e_turn_9" is not in the database (import its turn first, or pass --skip-unknown)`,
		"sample_id,overall_quality\ne_turn_1,3\ne_turn_1,3\n":            `bad.csv:3: sample_id: bad record: "e_turn_1" is listed twice in this file (first on line 2; --on-duplicate first or last chooses)`,
		"sample_id,overall_quality,resists_misleading\ne_turn_1,3,Yes\n": `bad.csv:2: resists_misleading: invalid: "Yes" given, but the field is fixed to NA`,
	} {
		p := writeFile(t, dir, "bad.csv", body)
		if err := importer.Scores(ctx, s, []string{p}, o); err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, want)) {
			t.Errorf("got %v; want %q", err, want)
		}
	}
	out.Reset()
	o.In = strings.NewReader("sample_id,overall_quality\ne_turn_1,3\n")
	if err := importer.Scores(ctx, s, []string{"-"}, o); err != nil || out.String() != "stdin: judge j: 1 scores new, 0 unchanged, 0 replaced\n" {
		t.Fatalf("after the bad files: %q %v", out.String(), err)
	}
}

// TestProgress: import and import-scores report the bytes read of all their files, ending at
// the sum of the files' sizes.
func TestProgress(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := storetest.Open(t, "", store.Options{})
	r := storetest.Rubric(t)
	var reports [][2]int64
	record := func(done, total int64) { reports = append(reports, [2]int64{done, total}) }
	check := func(what string, total int64) {
		t.Helper()
		if len(reports) < 2 || reports[len(reports)-1] != [2]int64{total, total} {
			t.Fatalf("%s: reports %v, want the last at %d of %d", what, reports, total, total)
		}
		for i := 1; i < len(reports); i++ {
			if reports[i][0] < reports[i-1][0] || reports[i][1] != total {
				t.Fatalf("%s: reports %v go back or change the total", what, reports)
			}
		}
	}
	a := writeFile(t, dir, "a.jsonl", turns)
	b := writeFile(t, dir, "b.jsonl", strings.NewReplacer("e_turn_", "f_turn_", `"episode_id":"e"`, `"episode_id":"f"`).Replace(turns))
	o := importer.Options{Rubric: r, DB: s.Path(), Out: &bytes.Buffer{}, Progress: record}
	if err := importer.New(s, o).Run(ctx, []string{a, b}, false); err != nil {
		t.Fatal(err)
	}
	check("import", int64(2*len(turns)))

	reports = nil
	scores := "sample_id,correctness\ne_turn_1,4\nf_turn_2,3\n"
	p := writeFile(t, dir, "s.csv", scores)
	so := importer.ScoreOptions{Rubric: r, Judge: "j", Out: &bytes.Buffer{}, Progress: record}
	if err := importer.Scores(ctx, s, []string{p}, so); err != nil {
		t.Fatal(err)
	}
	check("import-scores", int64(len(scores)))
}
