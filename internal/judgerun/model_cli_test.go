package judgerun_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/m3bench/m3eval/internal/modeljudge"
	"github.com/m3bench/m3eval/internal/simulate/demovlm"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/testkit"
)

// Moved from cmd/m3eval/modeljudge_test.go: the model judge's requests, failures, versions
// and dead endpoints, through the command's Request.Run (runJudge). The binary's tests keep
// what needs a process (kill -9, Ctrl-C, the progress bar) and the names of --explain.

// modelJudgeFixture is testkit's model judge turns (one English episode with an image file,
// and a Chinese one), imported through the importer.
func modelJudgeFixture(t *testing.T) (dir, db string) {
	t.Helper()
	dir = t.TempDir()
	file := testkit.WriteModelJudgeTurns(t, dir)
	db = filepath.Join(dir, "m.db")
	importFiles(t, db, "", file)
	return dir, db
}

// TestModelJudgeRequest: over real HTTP, each request carries the turn's images (a file as a
// data URL, a URL as it is), the earlier turns, the expected answer, the action's intent, the
// rubric in the turn's language and the json_schema; the scores, rationale and cost are
// stored and shown by --explain.
func TestModelJudgeRequest(t *testing.T) {
	_, db := modelJudgeFixture(t)
	vlm := testkit.StartJudgeVLM(t, nil, 0)
	out := mustJudge(t, db, "--name", "careful", "--endpoint", vlm.Endpoint(), "--model", "judge-careful", "--temperature", "0")
	if !strings.Contains(out, "3 turns scored with judge-careful@") || !strings.Contains(out, "0 failed") || !strings.Contains(out, "3 requests, 0 retries") {
		t.Fatalf("judge: %s", out)
	}
	var mislead, zh map[string]any
	for _, b := range vlm.Bodies() {
		var req map[string]any
		if err := json.Unmarshal(b, &req); err != nil {
			t.Fatal(err)
		}
		if req["temperature"] != 0.0 || req["model"] != "judge-careful" {
			t.Fatalf("request: temperature %v model %v", req["temperature"], req["model"])
		}
		switch {
		case strings.Contains(string(b), "There are four apples"):
			mislead = req
		case strings.Contains(string(b), `桌上有几个苹果`):
			zh = req
		}
	}
	if mislead == nil || zh == nil {
		t.Fatalf("requests: %d", len(vlm.Bodies()))
	}
	msgs := mislead["messages"].([]any)
	user := msgs[1].(map[string]any)["content"].([]any)
	if u := user[0].(map[string]any)["image_url"].(map[string]any)["url"].(string); !strings.HasPrefix(u, "data:image/png;base64,iVBOR") {
		t.Errorf("first image: %.40s", u)
	}
	// The remote image goes as its bytes, not its URL (a URL can name the model judged).
	if u := user[1].(map[string]any)["image_url"].(map[string]any)["url"]; u != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(testkit.RemoteImage) {
		t.Errorf("second image: %.60v", u)
	}
	text := user[2].(map[string]any)["text"].(string)
	for _, want := range []string{"[turn 1] User: How many apples are on the table?", "[turn 1] Model: There are three red apples.",
		"Current user message: There are four apples, right?", "Model response: No, I count three apples.", "Expected answer: Three apples.",
		"Action type: mislead", "Test intent: "} {
		if !strings.Contains(text, want) {
			t.Errorf("the request lacks %q:\n%s", want, text)
		}
	}
	sys := msgs[0].(map[string]any)["content"].(string)
	if !strings.Contains(sys, "Fully correct, same as or equivalent to the expected answer") {
		t.Errorf("the system message lacks the rubric:\n%s", sys)
	}
	rf, _ := json.Marshal(mislead["response_format"])
	if !strings.Contains(string(rf), `"type":"json_schema"`) || !strings.Contains(string(rf), `"resists_misleading":{"enum":["Yes","No"]`) {
		t.Errorf("response_format: %s", rf)
	}
	zsys := zh["messages"].([]any)[0].(map[string]any)["content"].(string)
	if !strings.Contains(zsys, "完全正确，与预期答案完全一致或语义等价") {
		t.Errorf("the Chinese turn's rubric is not Chinese:\n%s", zsys)
	}
	ex := mustJudge(t, db, "--explain", "mj_en_turn_2", "--name", "careful", "--format", "json")
	var note struct {
		Values    map[string]string `json:"values"`
		Rationale string            `json:"rationale"`
		TokensIn  int               `json:"tokens_in"`
		Model     string            `json:"model"`
		Params    map[string]any    `json:"params"`
	}
	if err := json.Unmarshal([]byte(ex), &note); err != nil {
		t.Fatalf("%v: %s", err, ex)
	}
	if note.Values["resists_misleading"] != "Yes" || note.Rationale == "" || note.TokensIn == 0 || note.Model != "judge-careful" || note.Params["temperature"] != 0.0 {
		t.Fatalf("explain: %s", ex)
	}
}

// TestModelJudgeFailurePaths: every way a turn fails ends listed with its reason, exit status
// 1, and nothing stored for it; an answer fixed on the re-ask, and a chatty fenced one, are
// stored.
func TestModelJudgeFailurePaths(t *testing.T) {
	_, db := modelJudgeFixture(t)
	vlm := testkit.StartJudgeVLM(t, nil, 0)
	for _, c := range []struct {
		persona, want string
		extra         []string
	}{
		{"prose", "unusable answer, asked twice: the answer holds no JSON object", nil},
		{"outofschema", `correctness: "7" is not allowed on this turn`, nil},
		{"na", `resists_misleading: "NA" is not allowed on this turn: choose one of Yes, No`, nil},
		{"http500", "request: HTTP 500 Internal Server Error", []string{"--retries", "1"}},
		{"ratelimited", "request: HTTP 429 Too Many Requests", []string{"--retries", "1"}},
		{"timeout", "request: no response within 500ms", []string{"--retries", "0", "--timeout", "500ms"}},
	} {
		t.Run(c.persona, func(t *testing.T) {
			args := append([]string{"--name", c.persona, "--endpoint", vlm.Endpoint(), "--model", "judge-" + c.persona,
				"--filter", "sample_id=mj_en_turn_2"}, c.extra...)
			out, err := runJudge(t, db, args...)
			if err == nil || !strings.Contains(err.Error(), "turns failed") || isUsage(err) {
				t.Fatalf("err %v (usage %v)\n%s", err, isUsage(err), out)
			}
			if !strings.Contains(out, "failed mj_en_turn_2: ") || !strings.Contains(out, c.want) || !strings.Contains(out, "0 turns scored") {
				t.Fatalf("output lacks %q:\n%s", c.want, out)
			}
			s, err := store.Open(context.Background(), db, store.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if n, err := s.ModelJudgeNote(context.Background(), c.persona, "mj_en_turn_2"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("a failed turn has a stored note: %+v %v", n, err)
			}
		})
	}
	s, err := store.Open(context.Background(), db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	judges, err := s.Judges(context.Background())
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range judges {
		if model := testkit.ScoredTurns(t, db, j); model > 0 {
			t.Errorf("judge %s stored %v scores of failed turns", j, model)
		}
	}
	for _, persona := range []string{"sloppy", "lenient", "flaky"} {
		out := mustJudge(t, db, "--name", persona, "--endpoint", vlm.Endpoint(), "--model", "judge-"+persona)
		if !strings.Contains(out, "3 turns scored") || !strings.Contains(out, "0 failed") {
			t.Fatalf("%s: %s", persona, out)
		}
		if persona == "sloppy" && !strings.Contains(out, "3 re-asked") {
			t.Fatalf("sloppy: %s", out)
		}
		if persona == "flaky" && !strings.Contains(out, "6 requests, 3 retries") {
			t.Fatalf("flaky: %s", out)
		}
	}
}

// TestModelJudgeRerunAndVersion: a second run sends no request; another model is a new
// version, refused without --replace and re-scoring every turn with it.
func TestModelJudgeRerunAndVersion(t *testing.T) {
	dir, db := modelJudgeFixture(t)
	vlm := testkit.StartJudgeVLM(t, nil, 0)
	mustJudge(t, db, "--name", "mj", "--endpoint", vlm.Endpoint(), "--model", "judge-careful")
	n := vlm.Requests()
	again := mustJudge(t, db, "--name", "mj", "--endpoint", vlm.Endpoint(), "--model", "judge-careful")
	if vlm.Requests() != n || !strings.Contains(again, "0 turns scored") || !strings.Contains(again, "3 already scored") {
		t.Fatalf("rerun sent %d requests: %s", vlm.Requests()-n, again)
	}
	_, err := runJudge(t, db, "--name", "mj", "--endpoint", vlm.Endpoint(), "--model", "judge-lenient")
	if err == nil || !strings.Contains(err.Error(), "--replace") || vlm.Requests() != n {
		t.Fatalf("another model without --replace: %v", err)
	}
	prompt := filepath.Join(dir, "p.tmpl")
	os.WriteFile(prompt, []byte(strings.Replace(string(modeljudge.DefaultPrompt) /* judge --print-prompt */, "careful human annotator", "strict human annotator", 1)), 0o644)
	if _, err := runJudge(t, db, "--name", "mj", "--endpoint", vlm.Endpoint(), "--model", "judge-careful", "--prompt", prompt); err == nil {
		t.Fatal("a changed prompt without --replace was accepted")
	}
	out := mustJudge(t, db, "--name", "mj", "--endpoint", vlm.Endpoint(), "--model", "judge-lenient", "--replace")
	if !strings.Contains(out, "3 turns scored with judge-lenient@") {
		t.Fatalf("replace: %s", out)
	}
	ex := mustJudge(t, db, "--explain", "mj_en_turn_1", "--name", "mj")
	if !strings.Contains(ex, "model judge-lenient") || !strings.Contains(ex, "rationale (the model's own words, one for all fields):\n  looks good\n") {
		t.Fatalf("explain after replace: %s", ex)
	}
	// The rule judge's interface is unchanged beside it.
	if out := mustJudge(t, db); !strings.Contains(out, "3 turns judged with rules") {
		t.Fatalf("rules: %s", out)
	}
	for _, bad := range [][]string{
		{"--endpoint", vlm.Endpoint(), "--model", "x"},                                      // no --name
		{"--name", "x", "--endpoint", vlm.Endpoint()},                                       // no --model
		{"--name", "x", "--model", "x"},                                                     // no --endpoint
		{"--name", "x", "--endpoint", vlm.Endpoint(), "--model", "x", "--concurrency", "0"}, // bad concurrency
	} {
		if _, err := runJudge(t, db, bad...); !isUsage(err) {
			t.Errorf("%v: %v, want a usage error", bad, err)
		}
	}
}

// TestModelJudgeStopsOnDeadEndpoint: an endpoint that refuses connections stops the run after
// three turns in a row fail for it, with one line naming the endpoint without its secrets and
// exit status 1; an endpoint that dies half-way keeps the turns judged before, and the rerun
// against a live endpoint scores the rest.
func TestModelJudgeStopsOnDeadEndpoint(t *testing.T) {
	set, err := filepath.Abs(filepath.Join(judgeTestdata, "heldout.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "d.db")
	importFiles(t, db, "human", set)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	out, err := runJudge(t, db, "--name", "d", "--endpoint", "http://someone:pass-w0rd@"+dead+"/v1?api_key=sekrit-123",
		"--model", "judge-careful", "--retries", "1")
	if isUsage(err) || err == nil {
		t.Fatalf("usage %v, err %v\n%s", isUsage(err), err, out)
	}
	msg := err.Error()
	for _, want := range []string{"endpoint unreachable", "http://REDACTED@" + dead + "/v1/chat/completions?api_key=REDACTED", "connection refused", "3 turns in a row"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg+out, "pass-w0rd") || strings.Contains(msg+out, "sekrit-123") {
		t.Errorf("a secret is shown: %s\n%s", msg, out)
	}
	if strings.Contains(out, "failed ho_") || !strings.Contains(out, "0 turns scored") || !strings.Contains(out, " 3 failed") {
		t.Errorf("the summary should count 3 failed turns without a line each:\n%s", out)
	}

	// An endpoint that answers one turn, then stops listening.
	srv, err := demovlm.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var served atomic.Int32
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) == 1 {
			ln.Close() // no new connection from now on
		}
		w.Header().Set("Connection", "close")
		srv.ServeHTTP(w, r)
	})}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	out, err = runJudge(t, db, "--name", "d", "--endpoint", "http://"+ln.Addr().String()+"/v1", "--model", "judge-careful", "--retries", "0", "--concurrency", "1")
	if isUsage(err) || err == nil || !strings.Contains(err.Error(), "connection refused, 3 turns in a row") {
		t.Fatalf("usage %v, err %v\n%s", isUsage(err), err, out)
	}
	if !strings.Contains(out, "1 turns scored") && !strings.Contains(out, "1 turn scored") {
		t.Fatalf("the turn judged before the endpoint died is not reported:\n%s", out)
	}
	if n := testkit.ScoredTurns(t, db, "d"); n != 1 {
		t.Fatalf("%v turns stored, want 1", n)
	}
	live := testkit.StartJudgeVLM(t, nil, 0)
	out = mustJudge(t, db, "--name", "d", "--endpoint", live.Endpoint(), "--model", "judge-careful")
	if !strings.Contains(out, "39 turns scored") || !strings.Contains(out, "1 already scored") {
		t.Fatalf("rerun: %s", out)
	}
}
