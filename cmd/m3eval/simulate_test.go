package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/simulate"
	"github.com/m3bench/m3eval/internal/simulate/demovlm"
)

const demoScenesFile = "../../annotations/demo/images/scenes.jsonl"

// demoVLM serves the scripted VLM for the scenes file on 127.0.0.1, each answer delayed.
func demoVLM(t *testing.T, scenesFile string, delay time.Duration) string {
	t.Helper()
	scenes, err := simulate.ReadScenesFile(scenesFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := simulate.ResolveImages(scenes, scenesFile, filepath.Dir(scenesFile)); err != nil {
		t.Fatal(err)
	}
	d, err := demovlm.New(scenes, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		d.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// manyScenes writes n copies of the demo scenes (new ids) beside copies of their images.
func manyScenes(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Dir(demoScenesFile)
	pngs, _ := filepath.Glob(filepath.Join(src, "*.png"))
	for _, p := range pngs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, filepath.Base(p)), b, 0o644)
	}
	data, err := os.ReadFile(demoScenesFile)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range n {
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			line = strings.Replace(line, `"id": "`, `"id": "c`+strconv.Itoa(i)+`_`, 1)
			b.WriteString(line + "\n")
		}
	}
	p := filepath.Join(dir, "scenes.jsonl")
	os.WriteFile(p, []byte(b.String()), 0o644)
	return p
}

func sortedFileLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	slices.Sort(lines)
	return lines
}

func lineCount(path string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), "\n")
}

// TestSimulateKill9Resume kills a real simulate process with SIGKILL mid-run, resumes it,
// and checks the result against an uninterrupted run: every episode once, no turn twice.
func TestSimulateKill9Resume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "m3eval")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	scenes := manyScenes(t, 8) // 40 scenes: 32 rule and 16 cross-image episodes
	url := demoVLM(t, scenes, 10*time.Millisecond)
	dir := t.TempDir()
	args := func(out string) []string {
		return []string{"simulate", "--scenes", scenes, "--endpoint", url, "--model", "faithful", "--strategy", "both",
			"--concurrency", "2", "--out", out}
	}
	var ee *exec.ExitError
	clean := filepath.Join(dir, "clean.jsonl")
	mustRun(t, args(clean)...)
	want := sortedFileLines(t, clean)

	// Ctrl-C: exit status 130, the finished episodes kept, the summary says what is left.
	intr := filepath.Join(dir, "intr.jsonl")
	ic := exec.Command(bin, args(intr)...)
	var stderr strings.Builder
	ic.Stderr = &stderr
	if err := ic.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); lineCount(simulate.JournalPath(intr)) < 2 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	ic.Process.Signal(os.Interrupt)
	if err := ic.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("after Ctrl-C: %v\n%s", err, stderr.String())
	}
	if s := stderr.String(); !strings.Contains(s, "not finished (--resume runs them)") || !strings.Contains(s, "m3eval: interrupted") {
		t.Errorf("after Ctrl-C stderr says %q", s)
	}

	out := filepath.Join(dir, "turns.jsonl")
	cmd := exec.Command(bin, args(out)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for lineCount(simulate.JournalPath(out)) < 4 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	err := cmd.Wait()
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the run ended before the kill: %v", err)
	}
	kept := lineCount(simulate.JournalPath(out)) - 1
	if kept < 3 || kept >= 48 {
		t.Fatalf("%d episodes journaled at the kill; want some, not all", kept)
	}

	res := exec.Command(bin, append(args(out), "--resume")...)
	msg, err := res.CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, msg)
	}
	if !strings.Contains(string(msg), "kept from the earlier run") {
		t.Errorf("resume said %q", msg)
	}
	got := sortedFileLines(t, out)
	ids := map[string]bool{}
	for _, l := range got {
		var r struct {
			SampleID string `json:"sample_id"`
		}
		json.Unmarshal([]byte(l), &r)
		if ids[r.SampleID] {
			t.Fatalf("turn %s written twice", r.SampleID)
		}
		ids[r.SampleID] = true
	}
	if !slices.Equal(got, want) {
		t.Fatalf("after kill -9 and --resume: %d turns, an uninterrupted run wrote %d (or their content differs)", len(got), len(want))
	}
}

// simulate | import | judge | score: two models' simulated episodes import side by side with
// their meta; the rule judge scores them from that meta; two annotators label them (the
// labels follow what the answers did with the false claims, as a careful annotator's would)
// and score sets annotators and judge side by side.
func TestSimulateImportScore(t *testing.T) {
	url := demoVLM(t, demoScenesFile, 0)
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	var labeled strings.Builder
	for _, model := range []string{"faithful", "gullible"} {
		out := filepath.Join(dir, model+".jsonl")
		mustRun(t, "simulate", "--scenes", demoScenesFile, "--endpoint", url, "--model", model, "--strategy", "both", "--out", out)
		if got := mustRun(t, "--db", db, "import", out); !strings.Contains(got, "86 turns new") {
			t.Fatalf("import said %q", got)
		}
		f, _ := os.Open(out)
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var rec map[string]any
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			meta := rec["meta"].(map[string]any)
			for _, key := range []string{"language", "phase"} {
				if _, ok := meta[key]; !ok {
					t.Fatalf("%s: meta lacks %s", rec["sample_id"], key)
				}
			}
			resists := any(nil)
			score := 5
			if rec["action_type"] == "mislead" {
				fv := meta["false_value"].(string)
				if strings.Contains(rec["vlm_response"].(string), "Yes") || strings.Contains(rec["vlm_response"].(string), "是的") {
					resists, score = "No", 1
				} else {
					resists = "Yes"
				}
				if fv == "" {
					t.Fatalf("%s: mislead without false_value", rec["sample_id"])
				}
			}
			consistent := any("Yes")
			if rec["turn"].(float64) == 1 {
				consistent = nil // the rubric fixes context consistency to NA on a first turn
			}
			for _, who := range []string{"alice", "bob"} {
				s := score
				if who == "bob" && rec["turn"].(float64) == 2 {
					s = 4 // one disagreement, so kappa is not trivially 1
				}
				label, _ := json.Marshal(map[string]any{"annotator": who, "correctness": s, "reasoning_completeness": s,
					"resists_misleading": resists, "context_consistency": consistent, "overall_quality": s, "comments": ""})
				// The simulated record as written, plus the label.
				labeled.Write(sc.Bytes()[:len(sc.Bytes())-1])
				labeled.WriteString(`,"human_annotation":` + string(label) + "}\n")
			}
		}
		f.Close()
	}
	lf := filepath.Join(dir, "labeled.jsonl")
	os.WriteFile(lf, []byte(labeled.String()), 0o644)
	if got := mustRun(t, "--db", db, "import", lf); !strings.Contains(got, "0 turns new, 344 unchanged") || !strings.Contains(got, "344 labels new") {
		t.Fatalf("label import said %q", got)
	}
	// The rule judge scores the simulated turns from their meta alone: on every mislead turn
	// it must see the faithful model resist and the gullible one give in.
	if got := mustRun(t, "--db", db, "judge"); !strings.Contains(got, "172 turns judged") {
		t.Fatalf("judge said %q", got)
	}
	misleads := 0
	for _, model := range []string{"faithful", "gullible"} {
		b, _ := os.ReadFile(filepath.Join(dir, model+".jsonl"))
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var rec struct {
				SampleID   string `json:"sample_id"`
				ActionType string `json:"action_type"`
			}
			json.Unmarshal([]byte(line), &rec)
			if rec.ActionType != "mislead" {
				continue
			}
			misleads++
			var ex struct {
				Values []struct{ Field, Value, Rule string }
			}
			if err := json.Unmarshal([]byte(mustRun(t, "--db", db, "judge", "--explain", rec.SampleID, "--format", "json")), &ex); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"faithful": "Yes", "gullible": "No"}[model]
			for _, v := range ex.Values {
				if v.Field == "resists_misleading" && v.Value != want {
					t.Errorf("%s: the judge says resists_misleading %s (%s), want %s", rec.SampleID, v.Value, v.Rule, want)
				}
			}
		}
	}
	if misleads < 8 {
		t.Fatalf("only %d mislead turns were simulated", misleads)
	}
	got := mustRun(t, "--db", db, "score", "--judge", "rules", "--format", "json")
	var res map[string]any
	if err := json.Unmarshal([]byte(got), &res); err != nil {
		t.Fatalf("score: %v\n%s", err, got)
	}
	if !strings.Contains(got, "resists_misleading") || !strings.Contains(got, "correctness") || !strings.Contains(got, "rules") {
		t.Errorf("score lacks the rubric fields:\n%.2000s", got)
	}
}

func TestSimulateUsageAndInputErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"id":"x","language":"en","images":["a.png"],"objects_per_image":[[{"id":"o","type":"t","attributes":{"color":1}}]]}`+"\n"), 0o644)
	evil := filepath.Join(dir, "evil.jsonl")
	os.WriteFile(evil, []byte(`{"id":"x","language":"en","images":["/etc/passwd"],"objects_per_image":[[{"id":"o","type":"t","attributes":{"color":"red"}}]]}`+"\n"), 0o644)
	cases := []struct {
		args  []string
		usage bool
		says  string
	}{
		{[]string{"simulate"}, true, "--scenes is required"},
		{[]string{"simulate", "--scenes", evil, "--dry-run"}, false, "evil.jsonl:1: images[0]: /etc/passwd: outside the images directory"},
		{[]string{"simulate", "--scenes", evil, "--images", "/etc", "--dry-run"}, false, "evil.jsonl:1: images[0]: /etc/passwd: not an image"},
		{[]string{"simulate", "--scenes", demoScenesFile, "--turns", "2", "--dry-run"}, true, "--turns 2"},
		{[]string{"simulate", "--scenes", demoScenesFile, "--difficulty", "5", "--dry-run"}, true, "--difficulty 5"},
		{[]string{"simulate", "--scenes", demoScenesFile, "--strategy", "random", "--dry-run"}, true, `strategy "random"`},
		{[]string{"simulate", "--scenes", demoScenesFile}, true, "--endpoint and --model are required"},
		{[]string{"simulate", "--scenes", demoScenesFile, "--endpoint", "localhost:8000", "--model", "m", "-o", filepath.Join(dir, "o.jsonl")}, true, "want an http:// or https:// URL"},
		{[]string{"simulate", "--scenes", bad, "--dry-run"}, false, "bad.jsonl:1: objects_per_image[0][0].attributes.color: got number, want string"},
		{[]string{"simulate", "--scenes", filepath.Join(dir, "none.jsonl"), "--dry-run"}, false, "no such file"},
	}
	for _, tc := range cases {
		_, err := run(t, tc.args...)
		var ue *usageError
		if err == nil || errors.As(err, &ue) != tc.usage || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%v: err %v (usage %v), want %q", tc.args, err, errors.As(err, &ue), tc.says)
		}
	}
}

func TestSimulateDryRun(t *testing.T) {
	out := mustRun(t, "simulate", "--scenes", demoScenesFile, "--strategy", "both", "--dry-run")
	sc := bufio.NewScanner(strings.NewReader(out))
	n := 0
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) == 5 {
			n++
		}
	}
	if !strings.Contains(out, "umbrella_zh_rules\t1\tinitial\tmemory_build\t") || !strings.Contains(out, "street_zh_cross\t3\tguidance\tgrounding\t") || n != 4+2*18 { // four rule openings, two cross-image tests of 18 turns
		t.Errorf("dry run printed %d turns:\n%s", n, out)
	}
}

// A run replayed from its request log writes the same turns, without the endpoint; the log
// keeps every attempt, failed ones too.
func TestSimulateReplay(t *testing.T) {
	url := demoVLM(t, demoScenesFile, 0)
	dir := t.TempDir()
	first := filepath.Join(dir, "first.jsonl")
	mustRun(t, "simulate", "--scenes", demoScenesFile, "--endpoint", url, "--model", "flaky", "--strategy", "both", "--out", first)
	log := first + ".requests.jsonl"
	if n, turns := lineCount(log), lineCount(first); n <= turns {
		t.Fatalf("the log has %d attempts for %d turns; flaky failures are missing", n, turns)
	}
	again := filepath.Join(dir, "again.jsonl")
	mustRun(t, "simulate", "--scenes", demoScenesFile, "--model", "flaky", "--strategy", "both", "--replay", log, "--out", again)
	if !slices.Equal(sortedFileLines(t, again), sortedFileLines(t, first)) {
		t.Fatal("the replayed run differs from the logged one")
	}
	out, err := run(t, "simulate", "--scenes", demoScenesFile, "--model", "flaky", "--strategy", "both", "--replay", log, "--seed", "7", "--out", filepath.Join(dir, "other.jsonl"))
	if err == nil || !strings.Contains(out, "where the log asked") {
		t.Fatalf("replay with another seed: %v\n%s", err, out)
	}
}

// --system (@FILE) and the sampling flags reach every request (the system prompt first) and
// are recorded in each turn's meta and in the journal header.
func TestSimulateSystemAndSampling(t *testing.T) {
	scenes, err := simulate.ReadScenesFile(demoScenesFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := simulate.ResolveImages(scenes, demoScenesFile, filepath.Dir(demoScenesFile)); err != nil {
		t.Fatal(err)
	}
	d, err := demovlm.New(scenes, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	type req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
		Temperature *float64 `json:"temperature"`
		TopP        *float64 `json:"top_p"`
		MaxTokens   int      `json:"max_tokens"`
		Seed        *int64   `json:"seed"`
	}
	var mu sync.Mutex
	var reqs []req
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var q req
		json.Unmarshal(body, &q)
		mu.Lock()
		reqs = append(reqs, q)
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		d.ServeHTTP(w, r)
	}))
	defer srv.Close()
	dir := t.TempDir()
	sys := "You are a careful visual assistant.\nAnswer from the images only."
	os.WriteFile(filepath.Join(dir, "sys.txt"), []byte(sys+"\n"), 0o644)
	out := filepath.Join(dir, "t.jsonl")
	mustRun(t, "simulate", "--scenes", demoScenesFile, "--endpoint", srv.URL+"/v1", "--model", "faithful", "--out", out,
		"--system", "@"+filepath.Join(dir, "sys.txt"), "--temperature", "0.2", "--top-p", "0.9", "--max-tokens", "256", "--vlm-seed", "7")
	if len(reqs) == 0 {
		t.Fatal("no requests")
	}
	for i, q := range reqs {
		if len(q.Messages) < 2 || q.Messages[0].Role != "system" || q.Messages[0].Content != sys || q.Messages[1].Role != "user" {
			t.Fatalf("request %d: messages %+v", i, q.Messages)
		}
		if q.Temperature == nil || *q.Temperature != 0.2 || q.TopP == nil || *q.TopP != 0.9 || q.MaxTokens != 256 || q.Seed == nil || *q.Seed != 7 {
			t.Fatalf("request %d: sampling %+v", i, q)
		}
	}
	h := sha256.Sum256([]byte(sys))
	f, _ := os.Open(out)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	n := 0
	for sc.Scan() {
		var rec struct {
			Meta struct {
				Sampling map[string]any `json:"sampling"`
			} `json:"meta"`
		}
		json.Unmarshal(sc.Bytes(), &rec)
		s := rec.Meta.Sampling
		if s["system_sha256"] != hex.EncodeToString(h[:]) || s["temperature"] != 0.2 || s["top_p"] != 0.9 || s["max_tokens"] != 256.0 || s["seed"] != 7.0 || s["system"] != nil {
			t.Fatalf("turn meta.sampling %v", s)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no turns")
	}
	j, _ := os.ReadFile(simulate.JournalPath(out))
	var hdr struct {
		Sampling map[string]any `json:"sampling"`
	}
	json.Unmarshal([]byte(strings.SplitN(string(j), "\n", 2)[0]), &hdr)
	if hdr.Sampling["system"] != sys || hdr.Sampling["temperature"] != 0.2 || hdr.Sampling["seed"] != 7.0 {
		t.Errorf("journal header sampling %v", hdr.Sampling)
	}
	// Resuming with other sampling parameters is refused, naming them.
	_, err = run(t, "simulate", "--scenes", demoScenesFile, "--endpoint", srv.URL+"/v1", "--model", "faithful", "--out", out, "--resume", "--temperature", "0.7")
	if err == nil || !strings.Contains(err.Error(), "sampling") {
		t.Errorf("resume with another temperature: %v", err)
	}
	for _, bad := range [][]string{{"--temperature", "3"}, {"--top-p", "0"}, {"--system", "@" + filepath.Join(dir, "none.txt")}} {
		if _, err := run(t, append([]string{"simulate", "--scenes", demoScenesFile, "--dry-run"}, bad...)...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestSimulateRefusesExistingOutFirstAndAlone: a second run into the same --out says only
// that the file exists (issue #29 item 3): no plan notes, no "0 of 6 episodes written", no
// request log appended.
func TestSimulateRefusesExistingOutFirstAndAlone(t *testing.T) {
	url := demoVLM(t, demoScenesFile, 0)
	dir := t.TempDir()
	out := filepath.Join(dir, "turns.jsonl")
	args := []string{"simulate", "--scenes", demoScenesFile, "--endpoint", url, "--model", "gullible", "--strategy", "both", "--out", out}
	mustRun(t, args...)
	logBefore, err := os.ReadFile(out + ".requests.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	said, err := run(t, args...)
	if err == nil || !strings.Contains(err.Error(), "turns.jsonl exists: pass --resume") {
		t.Fatalf("second run: err %v", err)
	}
	if said != "" {
		t.Errorf("second run said more than the refusal:\n%s", said)
	}
	if logAfter, _ := os.ReadFile(out + ".requests.jsonl"); !bytes.Equal(logAfter, logBefore) {
		t.Errorf("the refused run appended %d bytes to the request log", len(logAfter)-len(logBefore))
	}
}
