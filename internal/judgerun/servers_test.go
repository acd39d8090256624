package judgerun_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/judgerun"
	"github.com/m3bench/m3eval/internal/simulate/demovlm"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/testkit"
)

// The client cases of issue #37 and the redirects and slow endpoints of issue #38, through
// m3eval judge --endpoint's flags against the demo VLM's judge personas on 127.0.0.1.

// runModelJudge is runJudge's model judge path with the client's notes (Request.Notices),
// which the command writes to standard error: the summary, the notes and the error.
func runModelJudge(t *testing.T, db string, args ...string) (out, notes string, err error) {
	t.Helper()
	return testkit.RunCommand(t, &judgerun.Request{}, db, args...)
}

// notes are the values a judge stored per sample of the fixture.
func notes(t *testing.T, db, judge string) map[string]string {
	t.Helper()
	s, err := store.Open(context.Background(), db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := map[string]string{}
	for _, id := range []string{"mj_en_turn_1", "mj_en_turn_2", "mj_zh_turn_1"} {
		n, err := s.ModelJudgeNote(context.Background(), judge, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out[id] = strings.Join(n.Values, ",")
	}
	return out
}

func TestModelJudgeReadsEveryServer(t *testing.T) {
	_, db := modelJudgeFixture(t)
	vlm := testkit.StartJudgeVLM(t, nil, 0)
	mustJudge(t, db, "--name", "careful", "--endpoint", vlm.Endpoint(), "--model", "judge-careful")
	want := notes(t, db, "careful")
	if len(want) != 3 {
		t.Fatalf("careful stored %v", want)
	}
	for _, c := range []struct {
		persona string
		extra   []string
		says    string
	}{
		{"streamed", nil, ""},
		{"parts", nil, ""},
		{"error200", nil, ""},
		{"retryafter", []string{"--max-retry-wait", "10ms"}, "judge retryafter: the endpoint asked to wait 45s before retrying (Retry-After); waiting 10ms, the most --max-retry-wait allows"},
	} {
		t.Run(c.persona, func(t *testing.T) {
			out, said, err := runModelJudge(t, db, append([]string{"--name", c.persona, "--endpoint", vlm.Endpoint(), "--model", "judge-" + c.persona}, c.extra...)...)
			if err != nil || !strings.Contains(out, "3 turns scored") {
				t.Fatalf("%v\n%s", err, out)
			}
			if got := notes(t, db, c.persona); len(got) != 3 || got["mj_en_turn_2"] != want["mj_en_turn_2"] || got["mj_zh_turn_1"] != want["mj_zh_turn_1"] || got["mj_en_turn_1"] != want["mj_en_turn_1"] {
				t.Errorf("stored %v, careful stored %v", got, want)
			}
			if !strings.Contains(said, c.says) {
				t.Errorf("notes %q lack %q", said, c.says)
			}
		})
	}
	// A cut answer is a failed turn, never a score; the summary counts it and names --max-tokens.
	out, _, err := runModelJudge(t, db, "--name", "cut", "--endpoint", vlm.Endpoint(), "--model", "judge-cut", "--max-tokens", "7")
	if !errors.Is(err, judgerun.ErrTurnsFailed) || !strings.Contains(out, "0 turns scored") || !strings.Contains(out, "3 failed (3 of them cut at the token limit: raise --max-tokens)") ||
		!strings.Contains(out, `failed mj_en_turn_1: request: the answer was cut at the token limit (finish_reason "length", max_tokens 7): raise --max-tokens`) {
		t.Fatalf("err %v:\n%s", err, out)
	}
	if got := notes(t, db, "cut"); len(got) != 0 {
		t.Errorf("cut answers stored: %v", got)
	}
}

// TestModelJudgeFollowsNoRedirect (issue #38 item 6): a 302 is never followed as a GET whose
// canned answer becomes a score, and a 307 to another host sends it nothing; each turn fails
// saying why, nothing is stored, and the exit status is 1.
func TestModelJudgeFollowsNoRedirect(t *testing.T) {
	_, db := modelJudgeFixture(t)
	vlm := testkit.StartJudgeVLM(t, nil, 0)
	out, _, err := runModelJudge(t, db, "--name", "r302", "--endpoint", vlm.Endpoint(), "--model", "judge-redirect")
	if !errors.Is(err, judgerun.ErrTurnsFailed) || !strings.Contains(out, "the endpoint redirects (HTTP 302)") || !strings.Contains(out, "it would turn the POST into a GET") {
		t.Fatalf("err %v:\n%s", err, out)
	}
	for _, b := range vlm.Bodies() {
		if len(b) == 0 {
			t.Errorf("a request without a body (a GET) reached the endpoint")
		}
	}
	// Another host: a server on another port that sends everything on to the demo VLM.
	before := vlm.Requests()
	away := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, vlm.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(away.Close)
	out, _, err = runModelJudge(t, db, "--name", "r307", "--endpoint", away.URL+"/v1", "--model", "judge-careful")
	if !errors.Is(err, judgerun.ErrTurnsFailed) || !strings.Contains(out, "(HTTP 307)") || !strings.Contains(out, "it is another host") {
		t.Fatalf("err %v:\n%s", err, out)
	}
	if vlm.Requests() != before {
		t.Errorf("the other host got %d requests", vlm.Requests()-before)
	}
	for _, j := range []string{"r302", "r307"} {
		if got := notes(t, db, j); len(got) != 0 {
			t.Errorf("%s stored %v", j, got)
		}
	}
	if strings.Contains(out, demovlm.CannedAnswer) {
		t.Errorf("the canned answer shows: %s", out)
	}
}

// TestModelJudgeSlowEndpointStops (issue #38 item 7): timeouts count toward "3 unreachable
// in a row": an endpoint that never answers stops the run after three turns, whether each
// attempt times out (--timeout) or the turn's whole time runs out (--turn-timeout) with
// retries left.
func TestModelJudgeSlowEndpointStops(t *testing.T) {
	set, err := filepath.Abs(filepath.Join(judgeTestdata, "heldout.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "d.db")
	importFiles(t, db, "human", set)
	vlm := testkit.StartJudgeVLM(t, nil, 0)
	for _, c := range []struct {
		name  string
		extra []string
	}{
		{"attempt", []string{"--timeout", "100ms", "--retries", "0"}},
		{"turn", []string{"--timeout", "100ms", "--retries", "1000", "--turn-timeout", "350ms"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			out, _, err := runModelJudge(t, db, append([]string{"--name", "slow-" + c.name, "--endpoint", vlm.Endpoint(), "--model", "judge-timeout", "--concurrency", "1"}, c.extra...)...)
			if !errors.Is(err, judgerun.ErrUnreachable) || !strings.Contains(err.Error(), "no answer in time, 3 turns in a row") {
				t.Fatalf("err %v:\n%s", err, out)
			}
			if !strings.Contains(out, "0 turns scored") || !strings.Contains(out, " 3 failed") {
				t.Errorf("summary:\n%s", out)
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("took %s", took)
			}
		})
	}
}

// --max-retry-wait and --turn-timeout must be above 0: a usage error names the flag.
func TestModelJudgeRetryFlagsChecked(t *testing.T) {
	_, db := modelJudgeFixture(t)
	for _, c := range [][]string{{"--max-retry-wait", "0s", "--max-retry-wait 0s"}, {"--turn-timeout", "-1s", "--turn-timeout -1s"}} {
		_, err := runJudge(t, db, "--name", "x", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", c[0], c[1])
		if err == nil || !isUsage(err) || !strings.Contains(err.Error(), c[2]) {
			t.Errorf("%v: err %v (usage %v)", c, err, isUsage(err))
		}
	}
}

// TestModelJudgeWrongEndpointStops: a key the server refuses (401) or a URL or model it does
// not have (404) fails every turn alike, so the run stops after 3 turns in a row with one
// line that carries the server's words, as for an endpoint that cannot be reached, instead
// of sending every turn and listing each; a 400 (one turn's request) does not stop it.
func TestModelJudgeWrongEndpointStops(t *testing.T) {
	set, err := filepath.Abs(filepath.Join(judgeTestdata, "heldout.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "d.db")
	importFiles(t, db, "human", set)
	for _, c := range []struct {
		status    int
		body      string
		stops     bool
		say, hint string
	}{
		{401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`, true,
			"Incorrect API key provided", "--api-key-env"},
		{404, `{"object":"error","message":"The model ` + "`judge-x`" + ` does not exist.","type":"NotFoundError","param":null,"code":404}`, true,
			"The model `judge-x` does not exist.", "check --endpoint and --model"},
		{400, `{"error":{"message":"maximum context length is 4096 tokens"}}`, false, "maximum context length", ""},
	} {
		t.Run(http.StatusText(c.status), func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			}))
			t.Cleanup(srv.Close)
			out, _, err := runModelJudge(t, db, "--name", "wrong", "--endpoint", srv.URL+"/v1", "--model", "judge-x", "--concurrency", "1")
			if !c.stops {
				if !errors.Is(err, judgerun.ErrTurnsFailed) || n.Load() != 40 || strings.Count(out, c.say) != 40 {
					t.Fatalf("err %v after %d requests, want every turn of 40 tried and listed:\n%s", err, n.Load(), out)
				}
				return
			}
			if !errors.Is(err, judgerun.ErrUnreachable) || !strings.Contains(err.Error(), "3 turns in a row") ||
				!strings.Contains(err.Error(), c.say) || !strings.Contains(err.Error(), c.hint) {
				t.Fatalf("err %v, want the run stopped saying %q and %q:\n%s", err, c.say, c.hint, out)
			}
			// 3 turns, and at most the one turn in flight when the third failed (--concurrency 1).
			if n.Load() < 3 || n.Load() > 4 || strings.Contains(out, "failed ho_") || !strings.Contains(out, " 3 failed") {
				t.Errorf("%d requests, want 3 or 4 of the 40 turns, counted without a line each:\n%s", n.Load(), out)
			}
		})
	}
}

// TestModelJudgeAnswerWithoutText: a judge that answers with tool calls, with only its
// reasoning, or with a filtered answer scores nothing: each turn fails at once (not
// re-asked, not retried) saying what came instead, and the tokens the server reports count.
func TestModelJudgeAnswerWithoutText(t *testing.T) {
	_, db := modelJudgeFixture(t)
	for _, c := range []struct{ name, message, finish, say string }{
		{"tools", `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"score","arguments":"{}"}}]}`, "tool_calls", "only tool_calls"},
		{"thinking", `{"role":"assistant","content":null,"reasoning_content":"{\"correctness\": 5}"}`, "stop", "only reasoning_content"},
		{"filtered", `{"role":"assistant","content":"The answer is"}`, "content_filter", "content filter"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n.Add(1)
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"object":"chat.completion","choices":[{"index":0,"message":`+c.message+`,"finish_reason":"`+c.finish+`"}],"usage":{"prompt_tokens":100,"completion_tokens":7}}`)
			}))
			t.Cleanup(srv.Close)
			out, _, err := runModelJudge(t, db, "--name", c.name, "--endpoint", srv.URL+"/v1", "--model", "j")
			if !errors.Is(err, judgerun.ErrTurnsFailed) || n.Load() != 3 || strings.Count(out, c.say) != 3 ||
				!strings.Contains(out, "0 turns scored") || !strings.Contains(out, "tokens in 300, out 21") {
				t.Fatalf("err %v after %d requests, want 3 turns failed saying %q, 3 requests and their tokens:\n%s", err, n.Load(), c.say, out)
			}
			if got := notes(t, db, c.name); len(got) != 0 {
				t.Errorf("stored %v", got)
			}
		})
	}
}
