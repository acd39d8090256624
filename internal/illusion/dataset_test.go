package illusion

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/golden"
)

// TestBuildTestSetsParquet builds test sets from Parquet splits named like the golden
// "paper_sizes" case (scaled down) and checks rows, image bytes, schema, metadata and the
// summary.
func TestBuildTestSetsParquet(t *testing.T) {
	dir := t.TempDir()
	splits := []struct {
		name  string
		size  int
		salt  uint64
		w     []int
		group int
	}{
		{"Illusion_ICON", 900, 1, []int{34, 67, 99}, 128},
		{"Illusion_LOGO", 300, 2, []int{30, 70, 100}, 1000},
		{"Illusion_IN", 45, 3, []int{50, 80, 97}, 7},
	}
	var inputs []SplitInput
	allNames := map[string][]string{}
	allImgs := map[string][][]byte{}
	for _, s := range splits {
		names := synthNames(s.size, s.salt, s.w, false)
		p := filepath.Join(dir, s.name+".parquet")
		allImgs[s.name] = writeHFParquet(t, p, names, s.group, 20)
		allNames[s.name] = names
		inputs = append(inputs, SplitInput{s.name, []string{p}})
	}
	out := filepath.Join(dir, "out")
	res, err := BuildTestSets(context.Background(), inputs, 60, 42, out)
	if err != nil {
		t.Fatal(err)
	}
	// The same selection drawn directly, without files.
	sampler, _ := NewSampler(42, 60)
	for i, s := range splits {
		want := sampler.Select(allNames[s.name]).Indices
		if !slices.Equal(res[i].Selection.Indices, want) {
			t.Fatalf("%s: indices differ from Sampler.Select", s.name)
		}
		if res[i].OutputFile != strings.ToLower(s.name)+"_test60.parquet" {
			t.Fatalf("output file %s", res[i].OutputFile)
		}
		rows, pf := readHFParquet(t, filepath.Join(out, res[i].OutputFile))
		if len(rows) != len(want) {
			t.Fatalf("%s: %d rows, want %d", s.name, len(rows), len(want))
		}
		for j, idx := range want {
			if *rows[j].ImageName != allNames[s.name][idx] || !bytes.Equal(rows[j].Image.Bytes, allImgs[s.name][idx]) {
				t.Fatalf("%s row %d: not input row %d", s.name, j, idx)
			}
			if (idx%3 == 0) != (rows[j].Image.Path == nil) {
				t.Fatalf("%s row %d: path null-ness changed", s.name, j)
			}
		}
		_, in := readHFParquet(t, inputs[i].Paths[0])
		if pf.Schema().String() != in.Schema().String() {
			t.Fatalf("schema changed:\n%s\nvs\n%s", pf.Schema(), in.Schema())
		}
		if v, ok := pf.Lookup("huggingface"); !ok || v != hfFeatures {
			t.Fatalf("huggingface metadata not kept: %q", v)
		}
	}
	// IN has 45 rows for 60 wanted: its groups are short and the summary must say so.
	if len(res[2].Selection.Short()) == 0 {
		t.Fatal("expected short groups in Illusion_IN")
	}
	got, err := os.ReadFile(filepath.Join(out, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "testdata/summary.golden.json", got)
	var parsed map[string]map[string]any
	if err := json.Unmarshal(got, &parsed); err != nil {
		t.Fatal(err)
	}
	if parsed["Illusion_IN"]["total_sampled"].(float64) != 45 {
		t.Fatalf("total_sampled = %v", parsed["Illusion_IN"]["total_sampled"])
	}
}

// TestBuildMatchesPythonGolden runs the golden "paper_sizes" case (CPython's selection on
// 20,000/5,600/6,900 names) through real Parquet files and compares the rows written.
func TestBuildMatchesPythonGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 32,500 rows")
	}
	data, err := os.ReadFile("testdata/select_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g selectGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	c := g.Cases[0]
	if c.Name != "paper_sizes" {
		t.Fatalf("first golden case is %s", c.Name)
	}
	dir := t.TempDir()
	var inputs []SplitInput
	var names [][]string
	for _, sp := range c.Splits {
		n := synthNames(sp.Size, sp.Salt, sp.Weights, false)
		p := filepath.Join(dir, sp.Name+".parquet")
		writeHFParquet(t, p, n, 1000, 2)
		inputs = append(inputs, SplitInput{sp.Name, []string{p}})
		names = append(names, n)
	}
	res, err := BuildTestSets(context.Background(), inputs, c.N, c.Seed, filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range res {
		rows, _ := readHFParquet(t, filepath.Join(dir, "out", res[i].OutputFile))
		want := c.Results[i].Indices
		if len(rows) != len(want) {
			t.Fatalf("%s: %d rows, want %d", res[i].Split, len(rows), len(want))
		}
		for j, idx := range want {
			if *rows[j].ImageName != names[i][idx] {
				t.Fatalf("%s row %d: %s, want %s (row %d)", res[i].Split, j, *rows[j].ImageName, names[i][idx], idx)
			}
		}
	}
}

func TestBuildTestSetsJSONL(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	names := synthNames(40, 11, []int{30, 60, 90}, false)
	var lines []string
	for i, n := range names {
		line := `{"image_name": "` + n + `", "extra": {"k": [1, 2.50, "é"]}, "i": ` + strings.Repeat(" ", i%3) + `7}`
		if i%5 == 0 {
			line += "\r" // CRLF lines are copied as they are
		}
		lines = append(lines, line)
		b.WriteString(line + "\n")
		if i == 10 {
			b.WriteString("\n   \n") // blank lines are not rows
		}
	}
	in := filepath.Join(dir, "icon.json")
	// The last line has no newline.
	if err := os.WriteFile(in, []byte(strings.TrimSuffix(b.String(), "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := BuildTestSets(context.Background(), []SplitInput{{"Illusion_ICON", []string{in}}}, 12, 3, dir)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Format != FormatJSONL || res[0].OutputFile != "illusion_icon_test12.jsonl" {
		t.Fatalf("result %+v", res[0])
	}
	got, err := os.ReadFile(filepath.Join(dir, res[0].OutputFile))
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, idx := range res[0].Selection.Indices {
		want.WriteString(lines[idx] + "\n")
	}
	if string(got) != want.String() || len(res[0].Selection.Indices) != 12 {
		t.Fatalf("output:\n%s\nwant:\n%s", got, want.String())
	}
}

func TestReadNamesErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ content, want string }{
		{"{\"image_name\": \"a-1-b-Easy-1.png\"}\n{\"image_name\": 3}\n", "bad.jsonl:2: field image_name: not a string"},
		{"{\"image_name\": \"a\"}\n\n{\"name\": \"x\"}\n", "bad.jsonl:3: field image_name: missing"},
		{"{\"image_name\": \"a\"}\n[1]\n", "bad.jsonl:2: not a JSON object"},
	}
	for _, tt := range tests {
		p := filepath.Join(dir, "bad.jsonl")
		if err := os.WriteFile(p, []byte(tt.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadNames(context.Background(), []string{p}, FormatJSONL)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("error %v, want %q", err, tt.want)
		}
	}
	// A Parquet file without image_name.
	type other struct {
		Name string `parquet:"name"`
	}
	p := filepath.Join(dir, "other.parquet")
	f, _ := os.Create(p)
	w := parquetWriterFor[other](f)
	w.Write([]other{{"x"}})
	w.Close()
	f.Close()
	if format, _ := DetectFormat(p); format != FormatParquet {
		t.Fatal("Parquet not detected")
	}
	if _, err := ReadNames(context.Background(), []string{p}, FormatParquet); err == nil || !strings.Contains(err.Error(), `no top-level string column "image_name"`) {
		t.Fatalf("error %v", err)
	}
}

func TestBuildTestSetsErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.jsonl")
	os.WriteFile(p, []byte(`{"image_name":"a-1-b-Easy-1.png"}`+"\n"), 0o644)
	if _, err := BuildTestSets(context.Background(), nil, 10, 1, dir); err == nil {
		t.Error("no splits accepted")
	}
	if _, err := BuildTestSets(context.Background(), []SplitInput{{"A", []string{p}}, {"a", []string{p}}}, 10, 1, dir); err == nil {
		t.Error("duplicate split accepted")
	}
	if _, err := BuildTestSets(context.Background(), []SplitInput{{"A", []string{filepath.Join(dir, "missing")}}}, 10, 1, dir); err == nil {
		t.Error("missing file accepted")
	}
}

// TestShardsEqualOneFile splits a split into shards (Parquet and JSONL) and checks that the
// test set is the one drawn from the whole file.
func TestShardsEqualOneFile(t *testing.T) {
	dir := t.TempDir()
	names := synthNames(500, 12, []int{30, 60, 95}, false)
	whole := filepath.Join(dir, "whole.parquet")
	writeHFParquet(t, whole, names, 64, 10)
	var shards []string
	shardImg := map[string][]byte{}
	for i, cut := range [][2]int{{0, 170}, {170, 171}, {171, 500}} {
		p := filepath.Join(dir, fmt.Sprintf("shard-%05d.parquet", i))
		for k, img := range writeHFParquet(t, p, names[cut[0]:cut[1]], 50, 10) {
			shardImg[names[cut[0]+k]] = img
		}
		shards = append(shards, p)
	}
	var jsonShards []string
	for i, cut := range [][2]int{{0, 250}, {250, 500}} {
		var b strings.Builder
		for _, n := range names[cut[0]:cut[1]] {
			fmt.Fprintf(&b, "{\"image_name\": %q}\n", n)
		}
		jsonShards = append(jsonShards, writeFile(t, dir, fmt.Sprintf("j%d.jsonl", i), b.String()))
	}
	ctx := context.Background()
	a, err := BuildTestSets(ctx, []SplitInput{{"A", []string{whole}}}, 120, 5, filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := BuildTestSets(ctx, []SplitInput{{"A", shards}}, 120, 5, filepath.Join(dir, "b"))
	if err != nil {
		t.Fatal(err)
	}
	j, err := BuildTestSets(ctx, []SplitInput{{"A", jsonShards}}, 120, 5, filepath.Join(dir, "j"))
	if err != nil {
		t.Fatal(err)
	}
	ra, _ := readHFParquet(t, filepath.Join(dir, "a", a[0].OutputFile))
	rb, _ := readHFParquet(t, filepath.Join(dir, "b", b[0].OutputFile))
	jl, _ := os.ReadFile(filepath.Join(dir, "j", j[0].OutputFile))
	jlines := strings.Split(strings.TrimSuffix(string(jl), "\n"), "\n")
	if len(ra) != 120 || len(rb) != 120 || len(jlines) != 120 {
		t.Fatalf("%d, %d and %d rows", len(ra), len(rb), len(jlines))
	}
	for i := range ra {
		if *ra[i].ImageName != *rb[i].ImageName || !bytes.Equal(rb[i].Image.Bytes, shardImg[*rb[i].ImageName]) ||
			!strings.Contains(jlines[i], *ra[i].ImageName) {
			t.Fatalf("row %d: %s / %s / %s", i, *ra[i].ImageName, *rb[i].ImageName, jlines[i])
		}
	}
	// Shards of different formats or schemas are refused.
	if _, err := BuildTestSets(ctx, []SplitInput{{"A", []string{whole, jsonShards[0]}}}, 10, 5, dir); err == nil {
		t.Error("mixed formats accepted")
	}
	type other struct {
		ImageName string `parquet:"image_name"`
	}
	p := filepath.Join(dir, "other.parquet")
	f, _ := os.Create(p)
	w := parquetWriterFor[other](f)
	w.Write([]other{{names[0]}})
	w.Close()
	f.Close()
	if _, err := BuildTestSets(ctx, []SplitInput{{"A", []string{whole, p}}}, 10, 5, dir); err == nil || !strings.Contains(err.Error(), "schema differs") {
		t.Errorf("different schema: %v", err)
	}
}

// TestSampleProgress: illusion sample reports the split files' bytes twice over (names read,
// rows copied): every split's names first (nothing is written until every split reads), then
// every split's rows, ending at the total.
func TestSampleProgress(t *testing.T) {
	dir := t.TempDir()
	var splits []string
	var sizes []int64
	for i, name := range []string{"Illusion_ICON", "Illusion_LOGO"} {
		p := filepath.Join(dir, name+".parquet")
		writeHFParquet(t, p, synthNames(120, uint64(i+1), []int{34, 67, 99}, false), 64, 20)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		splits, sizes = append(splits, name+"="+p), append(sizes, fi.Size())
	}
	var got [][2]int64
	q := SampleRequest{Splits: splits, N: 30, Seed: 42, Out: filepath.Join(dir, "out"),
		Progress: func(done, total int64) { got = append(got, [2]int64{done, total}) }}
	if err := q.Run(context.Background(), &cmdio.IO{}); err != nil {
		t.Fatal(err)
	}
	a, b := sizes[0], sizes[1]
	total := 2 * (a + b)
	want := [][2]int64{{0, total}, {a, total}, {a + b, total}, {2*a + b, total}, {total, total}}
	if !slices.Equal(got, want) {
		t.Errorf("reports %v, want %v", got, want)
	}
}

// TestCopyRowsFileIsWholeWithTheUsualMode: a test set appears whole under its name (never
// while it is written: outfile.Replace) and with the mode any new file gets (0666 less the
// umask; it was 0600 when the temporary file's mode was kept), and a failed copy leaves
// nothing behind.
func TestCopyRowsFileIsWholeWithTheUsualMode(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "split.jsonl")
	var b strings.Builder
	for i := range 5 {
		fmt.Fprintf(&b, "{\"image_name\":\"animal-%d-Ocean-Easy-1.png\"}\n", i)
	}
	if err := os.WriteFile(src, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "set.jsonl")
	if err := CopyRows(context.Background(), []string{src}, dst, FormatJSONL, []int{1, 3}); err != nil {
		t.Fatal(err)
	}
	ref, err := os.Create(filepath.Join(dir, "ref"))
	if err != nil {
		t.Fatal(err)
	}
	ref.Close()
	got, err1 := os.Stat(dst)
	want, err2 := os.Stat(ref.Name())
	if err1 != nil || err2 != nil || got.Mode().Perm() != want.Mode().Perm() {
		t.Fatalf("test set mode %v, a new file's %v (%v %v)", got.Mode(), want.Mode(), err1, err2)
	}
	if data, _ := os.ReadFile(dst); strings.Count(string(data), "\n") != 2 || !strings.Contains(string(data), "animal-3-") {
		t.Fatalf("rows %q", data)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := CopyRows(context.Background(), []string{filepath.Join(dir, "none.jsonl")}, bad, FormatJSONL, []int{0}); err == nil {
		t.Fatal("a missing split copied")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("a failed copy left files: %v", entries)
	}
}
