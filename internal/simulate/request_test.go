package simulate_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/simulate"
	"github.com/m3bench/m3eval/internal/testkit"
)

const demoScenesFile = "../../annotations/demo/images/scenes.jsonl"

// isUsage says whether m3eval would exit 2 for err (written once in internal/testkit).
var isUsage = testkit.IsUsage

// The tests of this file run m3eval simulate through Request.Run, the command's own path:
// testkit.RunSimulate parses the flags into a Request, as cobra does, and calls Run.

func TestSimulateUsageAndInputErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	testkit.WriteFile(t, bad, `{"id":"x","language":"en","images":["a.png"],"objects_per_image":[[{"id":"o","type":"t","attributes":{"color":1}}]]}`+"\n")
	evil := filepath.Join(dir, "evil.jsonl")
	testkit.WriteFile(t, evil, `{"id":"x","language":"en","images":["/etc/passwd"],"objects_per_image":[[{"id":"o","type":"t","attributes":{"color":"red"}}]]}`+"\n")
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
		_, err := testkit.RunSimulate(t, tc.args[1:]...)
		if err == nil || isUsage(err) != tc.usage || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%v: err %v (usage %v), want %q", tc.args, err, isUsage(err), tc.says)
		}
	}
}

func TestSimulateDryRun(t *testing.T) {
	out := testkit.MustSimulate(t, "--scenes", demoScenesFile, "--strategy", "both", "--dry-run")
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
	url := testkit.DemoVLM(t, demoScenesFile, 0)
	dir := t.TempDir()
	first := filepath.Join(dir, "first.jsonl")
	testkit.MustSimulate(t, "--scenes", demoScenesFile, "--endpoint", url, "--model", "flaky", "--strategy", "both", "--out", first)
	log := first + ".requests.jsonl"
	if n, turns := testkit.LineCount(log), testkit.LineCount(first); n <= turns {
		t.Fatalf("the log has %d attempts for %d turns; flaky failures are missing", n, turns)
	}
	again := filepath.Join(dir, "again.jsonl")
	testkit.MustSimulate(t, "--scenes", demoScenesFile, "--model", "flaky", "--strategy", "both", "--replay", log, "--out", again)
	if !slices.Equal(testkit.SortedLines(t, again), testkit.SortedLines(t, first)) {
		t.Fatal("the replayed run differs from the logged one")
	}
	out, err := testkit.RunSimulate(t, "--scenes", demoScenesFile, "--model", "flaky", "--strategy", "both", "--replay", log, "--seed", "7", "--out", filepath.Join(dir, "other.jsonl"))
	if err == nil || !strings.Contains(out, "where the log asked") {
		t.Fatalf("replay with another seed: %v\n%s", err, out)
	}
}

// --system (@FILE) and the sampling flags reach every request (the system prompt first) and
// are recorded in each turn's meta and in the journal header.
func TestSimulateSystemAndSampling(t *testing.T) {
	d := testkit.DemoVLMServer(t, demoScenesFile)
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
		body, err := io.ReadAll(r.Body)
		var q req
		if err == nil {
			err = json.Unmarshal(body, &q)
		}
		if err != nil {
			t.Errorf("request body: %v", err) // not Fatal: this runs on the server's goroutine
		}
		mu.Lock()
		reqs = append(reqs, q)
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		d.ServeHTTP(w, r)
	}))
	defer srv.Close()
	dir := t.TempDir()
	sys := "You are a careful visual assistant.\nAnswer from the images only."
	testkit.WriteFile(t, filepath.Join(dir, "sys.txt"), sys+"\n")
	out := filepath.Join(dir, "t.jsonl")
	testkit.MustSimulate(t, "--scenes", demoScenesFile, "--endpoint", srv.URL+"/v1", "--model", "faithful", "--out", out,
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
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
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
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("turn %d: %v", n+1, err)
		}
		s := rec.Meta.Sampling
		if s["system_sha256"] != hex.EncodeToString(h[:]) || s["temperature"] != 0.2 || s["top_p"] != 0.9 || s["max_tokens"] != 256.0 || s["seed"] != 7.0 || s["system"] != nil {
			t.Fatalf("turn meta.sampling %v", s)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no turns")
	}
	j, err := os.ReadFile(simulate.JournalPath(out))
	if err != nil {
		t.Fatal(err)
	}
	var hdr struct {
		Sampling map[string]any `json:"sampling"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(string(j), "\n", 2)[0]), &hdr); err != nil {
		t.Fatalf("journal header: %v", err)
	}
	if hdr.Sampling["system"] != sys || hdr.Sampling["temperature"] != 0.2 || hdr.Sampling["seed"] != 7.0 {
		t.Errorf("journal header sampling %v", hdr.Sampling)
	}
	// Resuming with other sampling parameters is refused, naming them.
	_, err = testkit.RunSimulate(t, "--scenes", demoScenesFile, "--endpoint", srv.URL+"/v1", "--model", "faithful", "--out", out, "--resume", "--temperature", "0.7")
	if err == nil || !strings.Contains(err.Error(), "sampling") {
		t.Errorf("resume with another temperature: %v", err)
	}
	for _, bad := range [][]string{{"--temperature", "3"}, {"--top-p", "0"}, {"--system", "@" + filepath.Join(dir, "none.txt")}} {
		if _, err := testkit.RunSimulate(t, append([]string{"--scenes", demoScenesFile, "--dry-run"}, bad...)...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestSimulateRefusesExistingOutFirstAndAlone: a second run into the same --out says only
// that the file exists (issue #29 item 3): no plan notes, no "0 of 6 episodes written", no
// request log appended.
func TestSimulateRefusesExistingOutFirstAndAlone(t *testing.T) {
	url := testkit.DemoVLM(t, demoScenesFile, 0)
	dir := t.TempDir()
	out := filepath.Join(dir, "turns.jsonl")
	args := []string{"--scenes", demoScenesFile, "--endpoint", url, "--model", "gullible", "--strategy", "both", "--out", out}
	testkit.MustSimulate(t, args...)
	logBefore, err := os.ReadFile(out + ".requests.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	said, err := testkit.RunSimulate(t, args...)
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

// TestRunReportsProgress: Run tells Request.Progress every turn answered, out of a total
// never below the count, and the last report counts every turn written.
func TestRunReportsProgress(t *testing.T) {
	url := testkit.DemoVLM(t, demoScenesFile, 0)
	out := filepath.Join(t.TempDir(), "t.jsonl")
	var mu sync.Mutex
	var last, reports int64
	bad := ""
	q := simulate.Request{Scenes: demoScenesFile, Endpoint: url, Model: "faithful", Strategy: "both", Turns: 10,
		Difficulty: 2, Seed: 42, Concurrency: 3, Out: out, Timeout: time.Minute, MaxRetryWait: time.Second,
		TurnTimeout: time.Minute, Temperature: -1, TopP: -1, VLMSeed: -1, APIKeyEnv: "M3EVAL_NO_KEY"}
	q.Progress = func(done, total int64) {
		mu.Lock()
		defer mu.Unlock()
		reports++
		if done > total && bad == "" {
			bad = fmt.Sprintf("reported %d of %d", done, total)
		}
		last = max(last, done)
	}
	var said bytes.Buffer
	if err := q.Run(context.Background(), &cmdio.IO{Out: &said, Err: &said}); err != nil {
		t.Fatalf("%v\n%s", err, said.String())
	}
	if bad != "" {
		t.Error(bad)
	}
	if n := int64(testkit.LineCount(out)); last != n || reports < n {
		t.Errorf("last report %d turns after %d reports; the run wrote %d", last, reports, n)
	}
}

// TestRunServesTheDemoVLM: --demo-vlm hands the scenes, resolved, to Request.ServeDemo and
// runs nothing else; without a server it is an error, not a silent simulation.
func TestRunServesTheDemoVLM(t *testing.T) {
	q := simulate.Request{Scenes: demoScenesFile, Strategy: "rules", Turns: 10, Difficulty: 2, Concurrency: 1,
		MaxRetryWait: time.Second, TurnTimeout: time.Minute, Temperature: -1, TopP: -1, VLMSeed: -1,
		DemoVLM: true, Listen: "127.0.0.1:0", Out: filepath.Join(t.TempDir(), "never.jsonl")}
	if err := q.Run(context.Background(), &cmdio.IO{}); err == nil || !strings.Contains(err.Error(), "--demo-vlm") {
		t.Fatalf("no server: %v", err)
	}
	var got []simulate.Scene
	q.ServeDemo = func(_ context.Context, scenes []simulate.Scene, listen string, _ time.Duration, stdout io.Writer) error {
		got = scenes
		_, err := fmt.Fprintf(stdout, "serving on %s\n", listen)
		return err
	}
	var out bytes.Buffer
	if err := q.Run(context.Background(), &cmdio.IO{Out: &out}); err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || out.String() != "serving on 127.0.0.1:0\n" {
		t.Fatalf("served %d scenes, said %q", len(got), out.String())
	}
	for _, sc := range got {
		for _, img := range sc.Images {
			if _, err := os.Stat(img); err != nil {
				t.Errorf("scene %s: image %s not resolved beside the scenes file: %v", sc.ID, img, err)
			}
		}
	}
	if _, err := os.Stat(q.Out); err == nil {
		t.Error("--demo-vlm wrote a turns file")
	}
}

// TestSimulateOutInMissingDirectory: --out in a directory that does not exist is refused
// first, in the words every -o uses, naming --out; with or without --replay. It said
// "request log: open DIR/turns.jsonl.requests.jsonl: no such file or directory", naming a
// file the user never gave.
func TestSimulateOutInMissingDirectory(t *testing.T) {
	url := testkit.DemoVLM(t, demoScenesFile, 0)
	dir := filepath.Join(t.TempDir(), "nodir")
	out := filepath.Join(dir, "turns.jsonl")
	for name, args := range map[string][]string{
		"endpoint": {"--scenes", demoScenesFile, "--endpoint", url, "--model", "gullible", "--out", out},
		"replay":   {"--scenes", demoScenesFile, "--model", "gullible", "--replay", filepath.Join(t.TempDir(), "none.jsonl"), "--out", out},
	} {
		said, err := testkit.RunSimulate(t, args...)
		want := "--out " + out + ": the directory " + dir + " does not exist"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one saying %q", name, err, want)
		}
		if said != "" {
			t.Errorf("%s: said more than the refusal:\n%s", name, said)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s: %s was created (%v)", name, dir, err)
		}
	}
}
