package illusion_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/golden"
	"github.com/m3bench/m3eval/internal/illusion"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/usage"
)

// errFlag marks an error of flag parsing: the command reports it as a usage error too.
var errFlag = errors.New("flag")

// isUsage says whether m3eval would exit 2 for err.
func isUsage(err error) bool { return errors.Is(err, usage.Err) || errors.Is(err, errFlag) }

// illusionRun runs "m3eval illusion sample|score args..." through the command's own path:
// its command line parsed into the subcommand's request, as cobra does, then the request's
// Run; score's report goes to standard output in its --format through render.WriteIllusion,
// which the command hands to the request as this does (its -o, through the writer every command shares, is checked on
// the binary: cmd/m3eval/testdata/script/illusion.txtar). It returns standard output and
// standard error.
func illusionRun(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	if len(args) < 2 || args[0] != "illusion" {
		t.Fatalf("illusionRun %v", args)
	}
	var out, errb bytes.Buffer
	fs := pflag.NewFlagSet("illusion "+args[1], pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	switch args[1] {
	case "sample":
		var q illusion.SampleRequest
		q.AddFlags(fs)
		if err := fs.Parse(args[2:]); err != nil {
			return "", "", fmt.Errorf("%w: %v", errFlag, err)
		}
		if err := q.Run(context.Background(), &cmdio.IO{Out: &out, Err: &errb}); err != nil {
			return "", "", err
		}
	case "score":
		var q illusion.ScoreRequest
		q.AddFlags(fs)
		if err := fs.Parse(args[2:]); err != nil {
			return "", "", fmt.Errorf("%w: %v", errFlag, err)
		}
		q.Logs = fs.Args()
		q.Render = func(w io.Writer, rep *illusion.Report, format string, color bool) error {
			return render.WriteIllusion(w, rep, render.Format(format), color)
		}
		if err := q.Run(context.Background(), &cmdio.IO{Out: &out, Err: &errb}); err != nil {
			return "", "", err
		}
	default:
		t.Fatalf("illusionRun %v", args)
	}
	return out.String(), errb.String(), nil
}

type illusionImage struct {
	Bytes []byte  `parquet:"bytes,optional"`
	Path  *string `parquet:"path,optional"`
}

type illusionRow struct {
	Image     *illusionImage `parquet:"image,optional"`
	ImageName *string        `parquet:"image_name,optional"`
}

var (
	e2eShapes = []string{"animal", "Stationary", "face_emoji", "vehicle"}
	e2eScenes = []string{"Ocean", "Sand_dune", "Medieval_Village"}
	e2eDiffs  = []string{"Easy", "Medium", "Hard", "Hard"}
)

// mustWrite writes text to path; a failed write fails the test.
func mustWrite(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func e2eName(i int) string {
	return fmt.Sprintf("%s-%d-%s-%s-1.%d-%d.png", e2eShapes[i%4], i, e2eScenes[i%3], e2eDiffs[(i/4)%4], i%5, i)
}

// writeIllusionParquet writes a Hugging Face shaped IllusionBench split with real PNGs.
func writeIllusionParquet(t *testing.T, path string, n int) map[string][]byte {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[illusionRow](f, parquet.KeyValueMetadata("huggingface", `{"info":{}}`))
	imgs := map[string][]byte{}
	for i := 0; i < n; i++ {
		img := image.NewGray(image.Rect(0, 0, 8+i%5, 8))
		for j := range img.Pix {
			img.Pix[j] = byte(i*31 + j*7)
		}
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			t.Fatal(err)
		}
		name := e2eName(i)
		imgs[name] = b.Bytes()
		if _, err := w.Write([]illusionRow{{Image: &illusionImage{Bytes: b.Bytes(), Path: &name}, ImageName: &name}}); err != nil {
			t.Fatal(err)
		}
		if i%16 == 15 {
			w.Flush()
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return imgs
}

func readIllusionParquet(t *testing.T, path string) []illusionRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	r := parquet.NewGenericReader[illusionRow](pf)
	rows := make([]illusionRow, pf.NumRows())
	if n, _ := r.Read(rows); int64(n) != pf.NumRows() {
		t.Fatalf("read %d rows", n)
	}
	return rows
}

// TestIllusionEndToEnd builds test sets from a Parquet and a JSONL split, writes lmms-eval
// logs for them in two layouts, and scores them in every format.
func TestIllusionEndToEnd(t *testing.T) {
	dir := t.TempDir()
	icon := filepath.Join(dir, "icon.parquet")
	imgs := writeIllusionParquet(t, icon, 90)
	var jl strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&jl, `{"image_name":%q,"note":"row %d","image":{"bytes":null,"path":"p%d.png"}}`+"\n", e2eName(i+1000), i, i)
	}
	logo := filepath.Join(dir, "logo.jsonl")
	if err := os.WriteFile(logo, []byte(jl.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	stdout, stderr, err := illusionRun(t, "illusion", "sample", "--split", "Illusion_ICON="+icon,
		"--split", "Illusion_LOGO="+logo, "--n", "30", "--seed", "42", "--out", out)
	if err != nil {
		t.Fatalf("sample: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "Illusion_ICON: 30 of 90 rows -> illusion_icon_test30.parquet") ||
		!strings.Contains(stdout, "Illusion_LOGO: 30 of 40 rows -> illusion_logo_test30.jsonl") {
		t.Fatalf("stdout:\n%s", stdout)
	}
	var summary map[string]map[string]any
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &summary); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"original_counts", "sampled_counts", "total_sampled", "output_file", "allocated_counts"} {
		if _, ok := summary["Illusion_ICON"][k]; !ok {
			t.Fatalf("summary has no %s: %s", k, data)
		}
	}
	rows := readIllusionParquet(t, filepath.Join(out, "illusion_icon_test30.parquet"))
	if len(rows) != 30 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		if !bytes.Equal(r.Image.Bytes, imgs[*r.ImageName]) || *r.Image.Path != *r.ImageName {
			t.Fatalf("row %s: image changed", *r.ImageName)
		}
	}

	// The shape log, current layout: right for even doc_ids, "Ocean" otherwise, and one
	// "Stationery" answer for a Stationary image.
	set, err := illusion.LoadTestSet(context.Background(), "Illusion_ICON", filepath.Join(out, "illusion_icon_test30.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	var lg strings.Builder
	for id, n := range set.Docs {
		resp := "Ocean"
		if id%2 == 0 {
			resp = strings.ReplaceAll(strings.ToUpper(n.Shape[:1])+n.Shape[1:], "_", " ") + "."
			if n.Shape == "Stationary" {
				resp = "Stationery"
			}
		}
		fmt.Fprintf(&lg, `{"doc_id": %d, "target": "", "filtered_resps": [%q], "resps": [[%q]], "input": "q", "shape_recall": %d}`+"\n", id, resp, resp, 1-id%2)
	}
	shapeLog := filepath.Join(dir, "20250101_samples_illusionbench_arshia_icon_shape_test.jsonl")
	mustWrite(t, shapeLog, lg.String())
	// The scene log, oldest layout, for LOGO: every answer "sand dune".
	var logs []string
	for id := 0; id < 30; id++ {
		logs = append(logs, fmt.Sprintf(`{"doc_id": %d, "filtered_resps": ["sand dune"]}`, id))
	}
	sceneLog := filepath.Join(dir, "illusionbench_arshia_logo_scene_test.json")
	mustWrite(t, sceneLog, `{"args": {}, "logs": [`+strings.Join(logs, ",\n")+`]}`)

	args := []string{"illusion", "score", "--testset", "Illusion_ICON=" + filepath.Join(out, "illusion_icon_test30.parquet"),
		"--testset", "Illusion_LOGO=" + filepath.Join(out, "illusion_logo_test30.jsonl"), shapeLog, sceneLog}
	stdout, stderr, err = illusionRun(t, append(args, "--format", "json")...)
	if err != nil {
		t.Fatalf("score: %v\n%s", err, stderr)
	}
	var rep struct {
		Rows []struct {
			Split, Kind, Group string
			N, Hits            int
			Recall             *float64
		}
		Confusions []illusion.Confusion
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if r := rep.Rows[0]; r.Split != "Illusion_ICON" || r.Kind != "shape" || r.Group != "all" || r.N != 30 || r.Hits != 15 {
		t.Fatalf("first row %+v", r)
	}
	logoSet, err := illusion.LoadTestSet(context.Background(), "Illusion_LOGO", filepath.Join(out, "illusion_logo_test30.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dunes := 0
	for _, d := range logoSet.Docs {
		if d.Scene == "Sand_dune" {
			dunes++
		}
	}
	var logoAll bool
	for _, r := range rep.Rows {
		if r.Split == "Illusion_LOGO" && r.Kind == "scene" && r.Group == "all" {
			logoAll = r.N == 30 && r.Hits == dunes && dunes > 0
		}
	}
	if !logoAll {
		t.Fatalf("LOGO scene row wrong: %+v", rep.Rows)
	}
	if len(rep.Confusions) == 0 || rep.Confusions[0].Answer != "sand dune" {
		t.Fatalf("confusions %+v", rep.Confusions)
	}

	for _, f := range []string{"md", "table"} {
		stdout, _, err = illusionRun(t, append(args, "--format", f)...)
		if err != nil {
			t.Fatal(err)
		}
		golden.AssertString(t, filepath.Join("testdata", "illusion_score."+f+".golden"), stdout)
	}
	stdout, _, err = illusionRun(t, append(args, "--format", "md", "--by", "scene", "--top", "3")...)
	if err != nil {
		t.Fatal(err)
	}
	golden.AssertString(t, filepath.Join("testdata", "illusion_score_by_scene.md.golden"), stdout)
}

func TestIllusionUsageErrors(t *testing.T) {
	dir := t.TempDir()
	tests := [][]string{
		{"illusion", "sample", "--out", dir},
		{"illusion", "sample", "--split", "nofile", "--out", dir},
		{"illusion", "sample", "--split", "A=x.parquet"},
		{"illusion", "sample", "--split", "A=x", "--out", dir, "--n", "-1"},
		{"illusion", "sample", "--split", "A=x", "--out", dir, "--seed", "abc"},
		// "illusion score" without a log is the command's argument check
		// (cmd/m3eval/testdata/script/illusion.txtar).
		{"illusion", "score", "--format", "csv", "x.jsonl"},
		{"illusion", "score", "--by", "colour", "x.jsonl"},
		{"illusion", "score", "--kind", "both", "x.jsonl"},
		{"illusion", "score", "--testset", "x.parquet", "x.jsonl"},
		{"illusion", "score", "--rule", "strict", "x.jsonl"},
		{"illusion", "score", "--pool", "--latest", "x.jsonl"},
	}
	for _, args := range tests {
		_, _, err := illusionRun(t, args...)
		if !isUsage(err) {
			t.Errorf("m3eval %s: error %v is not a usage error", strings.Join(args, " "), err)
		}
	}
	// A data error is not a usage error and names the file and line.
	bad := filepath.Join(dir, "bad.jsonl")
	mustWrite(t, bad, `{"image_name": "a-1-b-Easy-1.png"}`+"\n"+`{"name": 1}`+"\n")
	_, _, err := illusionRun(t, "illusion", "sample", "--split", "A="+bad, "--out", dir)
	if err == nil || isUsage(err) || !strings.Contains(err.Error(), bad+":2: field image_name: missing") {
		t.Fatalf("error %v", err)
	}
}

// TestIllusionSampleShards gives one split as a glob of shards plus a repeated --split, and
// checks the test set equals the one drawn from the concatenated file.
func TestIllusionSampleShards(t *testing.T) {
	dir := t.TempDir()
	var all strings.Builder
	var parts []string
	for s := 0; s < 3; s++ {
		var b strings.Builder
		for i := 0; i < 50; i++ {
			fmt.Fprintf(&b, "{\"image_name\": %q}\n", e2eName(s*50+i))
		}
		all.WriteString(b.String())
		parts = append(parts, b.String())
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("s-00001.jsonl", parts[1])
	write("s-00000.jsonl", parts[0])
	extra := write("z.jsonl", parts[2])
	whole := write("whole.jsonl", all.String())
	if _, stderr, err := illusionRun(t, "illusion", "sample", "--split", "Illusion_ICON="+filepath.Join(dir, "s-*.jsonl"),
		"--split", "Illusion_ICON="+extra, "--n", "40", "--out", filepath.Join(dir, "a")); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if _, stderr, err := illusionRun(t, "illusion", "sample", "--split", "Illusion_ICON="+whole, "--n", "40", "--out", filepath.Join(dir, "b")); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	a, errA := os.ReadFile(filepath.Join(dir, "a", "illusion_icon_test40.jsonl"))
	b, errB := os.ReadFile(filepath.Join(dir, "b", "illusion_icon_test40.jsonl"))
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("shards gave\n%s\nthe whole file\n%s", a, b)
	}
	if _, _, err := illusionRun(t, "illusion", "sample", "--split", "A="+filepath.Join(dir, "nothing-*.jsonl"), "--out", dir); err == nil ||
		!strings.Contains(err.Error(), "no file matches") {
		t.Fatalf("error %v", err)
	}
}

// TestIllusionScoreRuns: a glob over a run folder catches a rerun and the results file; the
// command refuses to pool, --latest scores the newer run and the report lists both logs.
func TestIllusionScoreRuns(t *testing.T) {
	dir := t.TempDir()
	ts := filepath.Join(dir, "icon.jsonl")
	mustWrite(t, ts, `{"image_name": "animal-1-Ocean-Easy-1.png"}`+"\n"+`{"image_name": "vehicle-Ocean-Hard.png"}`+"\n")
	run := filepath.Join(dir, "llava_7b")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	const task = "_samples_unig2u_illusionbench_arshia_icon_shape_test.jsonl"
	mustWrite(t, filepath.Join(run, "20250101_000000"+task), `{"doc_id": 0, "filtered_resps": "cat"}`+"\n")
	mustWrite(t, filepath.Join(run, "20250301_000000"+task), `{"doc_id": 0, "filtered_resps": "animal", "shape_recall": 1}`+"\n"+`{"doc_id": 1, "filtered_resps": "Vehicle", "shape_recall": 1}`+"\n")
	mustWrite(t, filepath.Join(run, "20250301_000000_results.json"), `{"results": {}}`)
	logs, _ := filepath.Glob(filepath.Join(run, "*"))
	args := append([]string{"illusion", "score", "--testset", "Illusion_ICON=" + ts}, logs...)
	_, _, err := illusionRun(t, args...)
	if err == nil || !strings.Contains(err.Error(), "2 logs of task unig2u_illusionbench_arshia_icon_shape_test") || !strings.Contains(err.Error(), "model llava_7b") {
		t.Fatalf("pooled runs: %v", err)
	}
	stdout, stderr, err := illusionRun(t, append(args, "--latest", "--format", "md")...)
	if err != nil {
		t.Fatal(err)
	}
	// "vehicle-Ocean-Hard.png" has no index: the task keeps it as doc 1, and so does m3eval.
	// Markdown cells escape _ (render.EscapeMarkdown).
	md := strings.NewReplacer("_", `\_`).Replace
	for _, want := range []string{"| **all** | 2 | 2 | 100.0 |", md("| 20250301_000000" + task + " | llava_7b | Illusion_ICON | 2 | scored |"),
		md("| 20250101_000000" + task + " | llava_7b | Illusion_ICON | 1 | skipped: older than")} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "note: skipped "+filepath.Join(run, "20250301_000000_results.json")) {
		t.Errorf("stderr:\n%s", stderr)
	}
}
