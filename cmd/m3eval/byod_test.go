package main

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
	"github.com/m3bench/m3eval/internal/testkit"
)

// byodFixture is a judge benchmark's files in their own layout (testdata/byod/README.md).
const byodFixture = "testdata/byod"

// copyDir copies the regular files of src (one level of subfolders) into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// walkthroughCommands returns the command lines of the sh block in the "Bring your own
// data" section of docs/importing.md.
func walkthroughCommands(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/importing.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Bring your own data\n")
	if !ok {
		t.Fatal(`docs/importing.md has no "## Bring your own data" section`)
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	_, block, ok := strings.Cut(sec, "```sh\n")
	if !ok {
		t.Fatal("the walkthrough has no sh block")
	}
	block, _, _ = strings.Cut(block, "```")
	var cmds []string
	for _, l := range strings.Split(block, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			cmds = append(cmds, l)
		}
	}
	return cmds
}

// TestBringYourOwnData runs the walkthrough of docs/importing.md, as written, on the judge
// benchmark's files (several raters, a judge file with nested text-or-number scores,
// duplicates and unknown ids, a one-field rubric), then checks score's and estimate's
// statistics and the export against SciPy and scikit-learn (testdata/byod/reference.json,
// computed from the raw files by ref.py).
func TestBringYourOwnData(t *testing.T) {
	bringYourOwnData(t, "")
}

// TestBringYourOwnDataPostgres is the walkthrough on a PostgreSQL database: the same numbers.
func TestBringYourOwnDataPostgres(t *testing.T) {
	bringYourOwnData(t, storetest.PostgresPath(t, storetest.RequirePostgres(t)))
}

// bringYourOwnData runs the walkthrough on pg ("": the SQLite file the walkthrough names)
// and checks its numbers.
func bringYourOwnData(t *testing.T, pg string) {
	bin := testBinary(t)
	dir := t.TempDir()
	copyDir(t, byodFixture, dir)
	cmds := walkthroughCommands(t)
	if len(cmds) < 8 {
		t.Fatalf("the walkthrough has %d commands: %q", len(cmds), cmds)
	}
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	var all strings.Builder
	for _, c := range cmds {
		if pg != "" {
			c = strings.ReplaceAll(c, "--db judgebench.db", "--db '"+pg+"'")
		}
		cmd := exec.Command("bash", "-c", c)
		cmd.Env = env
		r := runCmd(t, cmd, dir, nil)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", c, r.code, r.stdout, r.stderr)
		}
		all.WriteString(r.stdout + r.stderr)
	}
	for _, want := range []string{
		"rater_b.jsonl: 0 turns new, 36 unchanged, 0 replaced; 36 labels new",
		"images/img3.png",
		"judge.jsonl: judge cogvlm: 32 scores new",
		"2 records skipped: their samples are not imported (--skip-unknown)",
		"2 samples listed more than once, the first record kept (--on-duplicate first): 3, 10",
		"left out: 4 labeled turns (10 labels) have no score of judge cogvlm (qwen-vl 4)",
		"report: action-space metrics left out",
		"report: grouped by model: every turn has one action_type",
	} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("the walkthrough's output lacks %q:\n%s", want, all.String())
		}
	}

	var ref struct {
		Pairwise []struct {
			Raters              []string
			N                   int
			CohenKappa          float64 `json:"cohen_kappa"`
			CohenKappaQuadratic float64 `json:"cohen_kappa_quadratic"`
			Pearson             float64
			PearsonP            float64 `json:"pearson_p"`
		}
		HumanVsAuto struct {
			N                          int
			Pearson, Spearman, Kendall float64
			KendallTauB                float64 `json:"kendall_tau_b"`
		} `json:"human_vs_auto"`
		Estimate map[string]struct {
			NLabeled  int     `json:"n_labeled"`
			HumanOnly float64 `json:"human_only"`
			JudgeOnly float64 `json:"judge_only"`
			LeftOut   int     `json:"labels_without_judge_score"`
			LeftOutN  int     `json:"label_values_without_judge_score"`
		}
		LabelsPerRater map[string]int `json:"labels_per_rater"`
	}
	testkit.ReadJSON(t, filepath.Join(byodFixture, "reference.json"), &ref)
	near := func(what string, got any, want float64) {
		t.Helper()
		g, ok := got.(float64)
		if !ok || math.Abs(g-want) > 1e-9 {
			t.Errorf("%s = %v, SciPy/scikit-learn %v", what, got, want)
		}
	}
	db := filepath.Join(dir, "judgebench.db")
	if pg != "" {
		db = pg
	}
	run := func(args ...string) {
		t.Helper()
		r := runBin(t, dir, nil, append([]string{"--db", db, "--rubric", "rubric.json"}, args...)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
	}
	run("score", "--judge", "cogvlm", "--format", "json", "-o", "score.json")
	var score map[string]any
	testkit.ReadJSON(t, filepath.Join(dir, "score.json"), &score)
	f := score["fields"].(map[string]any)["overall_quality"].(map[string]any)
	pairs := f["pairwise"].([]any)
	if len(pairs) != len(ref.Pairwise) {
		t.Fatalf("%d pairs, want %d", len(pairs), len(ref.Pairwise))
	}
	for i, p := range pairs {
		p := p.(map[string]any)
		rp := ref.Pairwise[i]
		who := strings.Join(rp.Raters, "–")
		if p["n_items"].(float64) != float64(rp.N) {
			t.Errorf("%s: n %v, want %d", who, p["n_items"], rp.N)
		}
		near(who+" κ", p["cohen_kappa"], rp.CohenKappa)
		near(who+" κ quadratic", p["cohen_kappa_quadratic"], rp.CohenKappaQuadratic)
		near(who+" Pearson r", p["pearson"], rp.Pearson)
		near(who+" Pearson p", p["tests"].(map[string]any)["pearson"].(map[string]any)["p"], rp.PearsonP)
	}
	hva := f["human_vs_auto"].(map[string]any)
	if hva["n_items_correlation"].(float64) != float64(ref.HumanVsAuto.N) {
		t.Errorf("human vs judge: n %v, want %d", hva["n_items_correlation"], ref.HumanVsAuto.N)
	}
	near("Pearson", hva["pearson"], ref.HumanVsAuto.Pearson)
	near("Spearman", hva["spearman"], ref.HumanVsAuto.Spearman)
	near("Kendall τ-b", hva["kendall_tau_b"], ref.HumanVsAuto.KendallTauB)

	run("estimate", "--judge", "cogvlm", "--format", "json", "-o", "estimate.json")
	var est struct {
		PPI []struct {
			Model     string
			NLabeled  int                    `json:"n_labeled"`
			LeftOut   int                    `json:"labels_without_judge_score"`
			LeftOutN  int                    `json:"label_values_without_judge_score"`
			HumanOnly struct{ Estimate any } `json:"human_only"`
			JudgeOnly struct{ Estimate any } `json:"judge_only"`
		} `json:"ppi"`
	}
	testkit.ReadJSON(t, filepath.Join(dir, "estimate.json"), &est)
	if len(est.PPI) != len(ref.Estimate) {
		t.Fatalf("%d estimate rows, want %d", len(est.PPI), len(ref.Estimate))
	}
	for _, r := range est.PPI {
		want, ok := ref.Estimate[r.Model]
		if !ok {
			t.Fatalf("estimate has model %q, which the data has not", r.Model)
		}
		if r.NLabeled != want.NLabeled || r.LeftOut != want.LeftOut || r.LeftOutN != want.LeftOutN {
			t.Errorf("%s: %d labeled, %d left out (%d labels); want %d, %d (%d)", r.Model, r.NLabeled, r.LeftOut, r.LeftOutN, want.NLabeled, want.LeftOut, want.LeftOutN)
		}
		near(r.Model+" human only", r.HumanOnly.Estimate, want.HumanOnly)
		near(r.Model+" judge only", r.JudgeOnly.Estimate, want.JudgeOnly)
	}

	var exported []struct {
		SampleID string `json:"sample_id"`
		Labels   []struct {
			Annotator string
			Overall   any `json:"overall_quality"`
		} `json:"human_annotations"`
	}
	testkit.ReadJSON(t, filepath.Join(dir, "judgebench-labels.json"), &exported)
	per := map[string]int{}
	for _, e := range exported {
		for _, l := range e.Labels {
			if _, ok := l.Overall.(float64); !ok {
				t.Errorf("%s: %s's overall_quality %v is not a number", e.SampleID, l.Annotator, l.Overall)
			}
			per[l.Annotator]++
		}
	}
	for r, n := range ref.LabelsPerRater {
		if per[r] != n {
			t.Errorf("export: %d labels of %s, the file has %d", per[r], r, n)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "judgebench.html")); err != nil {
		t.Errorf("report: %v", err)
	}
}

// TestUnknownActionType: a misspelled action type is refused with the nearest name; with
// --allow-unknown-actions it imports, and the rubric asks every field on the turn (a
// Resists Misleading answer is taken, not fixed to NA).
func TestUnknownActionType(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "m3eval.db")
	turn := `{"sample_id":"e_turn_2","episode_id":"e","turn":2,"action_type":"mislead_sutble","task_type":"t","user_message":"The cat is blue, right?","vlm_response":"Yes.","expected_answer":"No"}`
	writeFile(t, filepath.Join(dir, "turns.jsonl"), turn+"\n")
	r := runBin(t, dir, nil, "--db", db, "import", "turns.jsonl")
	if r.code != 1 || !strings.Contains(r.stderr, "turns.jsonl:1: action_type: bad record: mislead_sutble: not an action type; did you mean mislead_subtle?") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r := runBin(t, dir, nil, "--db", db, "import", "--allow-unknown-actions", "turns.jsonl"); r.code != 0 {
		t.Fatalf("--allow-unknown-actions: exit %d: %s", r.code, r.stderr)
	}
	label := func(rm string) string {
		return strings.TrimSuffix(turn, "}") + `,"human_annotation":{"correctness":1,"reasoning_completeness":1,` + rm +
			`"context_consistency":"Yes","overall_quality":1}}` + "\n"
	}
	writeFile(t, filepath.Join(dir, "missing.jsonl"), label(""))
	r = runBin(t, dir, nil, "--db", db, "import", "--allow-unknown-actions", "--annotator", "ann", "missing.jsonl")
	if r.code != 1 || !strings.Contains(r.stderr, "resists_misleading") {
		t.Errorf("a done label without resists_misleading on the unknown type: exit %d: %s", r.code, r.stderr)
	}
	writeFile(t, filepath.Join(dir, "labeled.jsonl"), label(`"resists_misleading":"No",`))
	if r := runBin(t, dir, nil, "--db", db, "import", "--allow-unknown-actions", "--annotator", "ann", "labeled.jsonl"); r.code != 0 {
		t.Errorf("resists_misleading answered on the unknown type: exit %d: %s", r.code, r.stderr)
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDataProblemsExitOne: a problem with the data is exit 1, not 2 (usage), and an import
// whose first file fails leaves no database behind; one that had imported a file keeps it.
func TestDataProblemsExitOne(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "new.db")
	writeFile(t, filepath.Join(dir, "bad.jsonl"), `{"sample_id":"e_turn_1","task_type":"t","user_message":"u","vlm_response":"v"}`+"\n")
	r := runBin(t, dir, nil, "--db", db, "import", "bad.jsonl")
	if r.code != 1 || !strings.Contains(r.stderr, "action_type, expected_answer: bad record: missing") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if m, _ := filepath.Glob(db + "*"); len(m) != 0 {
		t.Errorf("a failed import left %v", m)
	}
	if r := runBin(t, dir, nil, "--db", db, "import", "--demo"); r.code != 0 {
		t.Fatalf("--demo: exit %d: %s", r.code, r.stderr)
	}
	if r := runBin(t, dir, nil, "--db", db, "import", "bad.jsonl"); r.code != 1 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("a failed import into an existing database removed it: %v", err)
	}
	r = runBin(t, dir, nil, "--db", db, "sample", "--name", "s", "--n", "300", "--by", "model")
	if r.code != 1 || !strings.Contains(r.stderr, "--n 300, but only 35 imported turns match") {
		t.Errorf("sample --n 300 of 35 turns: exit %d: %s", r.code, r.stderr)
	}
}

// TestImagesForLogs: an lmms-eval log without its images gets them from --images DIR, by
// the question id (DIR/<doc_id>.png) or by --image-map; the "<image>" token is taken out of
// the prompt; a mapped file that is missing is listed in the summary.
func TestImagesForLogs(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs", "llava")
	imgs := filepath.Join(dir, "imgs")
	os.MkdirAll(logs, 0o755)
	os.MkdirAll(imgs, 0o755)
	png, err := os.ReadFile(filepath.Join(byodFixture, "images", "img0.png"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(imgs, "0.png"), string(png))
	writeFile(t, filepath.Join(imgs, "cat.png"), string(png))
	log := filepath.Join(logs, "20250101_120000_samples_mme.jsonl")
	writeFile(t, log, `{"doc_id": 0, "input": "<image>\nWhat is this?", "resps": [["A cat."]], "filtered_resps": ["A cat."], "target": "cat"}`+"\n"+
		`{"doc_id": 1, "input": "What colour? <image>", "resps": [["Red."]], "filtered_resps": ["Red."], "target": "red"}`+"\n")
	db := filepath.Join(dir, "m.db")
	r := runBin(t, dir, nil, "--db", db, "import", "--from", "lmms-eval", "--images", "imgs", log)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	type turnT struct {
		UserMessage string
		Images      []string
	}
	var turns []turnT
	s, err := store.Open(context.Background(), db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	err = s.StreamEpisodes(context.Background(), store.TurnFilter{}, func(_ []dataset.Turn, is []int64, _ []bool) error {
		ids = append(ids, is...)
		return nil
	})
	for _, id := range ids {
		it, lerr := s.LoadTurn(context.Background(), id)
		if lerr != nil {
			t.Fatal(lerr)
		}
		turns = append(turns, turnT{it.Turn.UserMessage, it.Turn.Images})
	}
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(turns, func(i, j int) bool { return turns[i].UserMessage > turns[j].UserMessage })
	if len(turns) != 2 || turns[0].UserMessage != "What is this?" || turns[1].UserMessage != "What colour?" {
		t.Fatalf("turns %+v", turns)
	}
	if len(turns[0].Images) != 1 || turns[0].Images[0] != filepath.Join(imgs, "0.png") || len(turns[1].Images) != 0 {
		t.Errorf("images %v, %v", turns[0].Images, turns[1].Images)
	}
	writeFile(t, filepath.Join(dir, "map.csv"), "id,file\n0,cat.png\n1,gone.png\n")
	db2 := filepath.Join(dir, "m2.db")
	r = runBin(t, dir, nil, "--db", db2, "import", "--from", "lmms-eval", "--images", "imgs", "--image-map", "map.csv", log)
	if r.code != 0 || !strings.Contains(r.stdout, "1 image file is missing or unreadable") || !strings.Contains(r.stdout, filepath.Join(imgs, "gone.png")) {
		t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
}

// TestRaterFileWithoutImages: the answers come in one file (with the picture and the
// model), each rater's scores in another (JSON Lines, or a CSV table) that repeats the
// question and the answer but not the picture. The raters' labels attach to the turns the
// first file made: the turns are unchanged, not a conflict, and keep their images and model.
func TestRaterFileWithoutImages(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "m3eval.db")
	rubric, err := os.ReadFile(filepath.Join(byodFixture, "rubric.json")) // overall_quality 1–5
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "rubric.json"), string(rubric))
	writeFile(t, filepath.Join(dir, "answers.jsonl"),
		`{"qid": 7, "q": "图中有几只猫？", "a": "两只。", "img": "p.png", "pair": "qwen-vs-llava"}`+"\n")
	writeFile(t, filepath.Join(dir, "p.png"), "not decoded at import")
	writeFile(t, filepath.Join(dir, "ratings.jsonl"),
		`{"item": "7", "rater": "张三", "score": "4", "q": "图中有几只猫？", "a": "两只。"}`+"\n"+
			`{"item": 7, "rater": "li", "score": 5, "q": "图中有几只猫？", "a": "两只。"}`+"\n")
	r := runBin(t, dir, nil, "--db", db, "--rubric", "rubric.json", "import", "--map", "sample_id=qid", "--map", "user_message=q",
		"--map", "vlm_response=a", "--map", "images=img", "--map", "model=pair", "answers.jsonl")
	if r.code != 0 {
		t.Fatalf("answers: exit %d: %s", r.code, r.stderr)
	}
	rate := []string{"--db", db, "--rubric", "rubric.json", "import", "--map", "sample_id=item", "--map", "annotator=rater",
		"--map", "label.overall_quality=score", "--map", "user_message=q", "--map", "vlm_response=a", "ratings.jsonl"}
	r = runBin(t, dir, nil, rate...)
	if r.code != 0 || !strings.Contains(r.stdout, "0 turns new, 2 unchanged, 0 replaced; 2 labels new") {
		t.Fatalf("ratings: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	r = runBin(t, dir, nil, rate...)
	if r.code != 0 || !strings.Contains(r.stdout, "0 labels new, 2 unchanged") {
		t.Fatalf("ratings again: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	// A third rater's scores as a CSV table: its columns are the paths.
	writeFile(t, filepath.Join(dir, "ratings.csv"), "item,rater,score,q,a\n7,wang,3,图中有几只猫？,两只。\n")
	r = runBin(t, dir, nil, append(rate[:len(rate)-1:len(rate)-1], "ratings.csv")...)
	if r.code != 0 || !strings.Contains(r.stdout, "ratings.csv: 0 turns new, 1 unchanged, 0 replaced; 1 labels new") {
		t.Fatalf("ratings.csv: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	r = runBin(t, dir, nil, "--db", db, "--rubric", "rubric.json", "export", "-o", "-")
	if r.code != 0 || !strings.Contains(r.stdout, `"model": "qwen-vs-llava"`) || !strings.Contains(r.stdout, "p.png") {
		t.Errorf("export lost the turn's model or image: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
}
