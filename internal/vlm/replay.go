package vlm

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// Replay answers from a request log instead of a VLM. Each (episode, turn) gets the answer
// its last successful attempt logged: a 200 with an answer, cut ones included, as cut.
// Replaying a run with the same scenes, settings and seed asks the same questions and so
// writes the same turns. A question that differs from the logged one is an error, since the
// log's answer was to another question.
type Replay struct {
	answers map[Tag]logged
}

type logged struct {
	question  string
	answer    string
	truncated bool // cut at the token limit: replayed with the same KindTruncated error
}

// NewReplay reads a request log written by Client (Options.Log). name is for errors.
func NewReplay(name string, r io.Reader) (*Replay, error) {
	rp := &Replay{answers: map[Tag]logged{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	for line := 1; sc.Scan(); line++ {
		var le logEntry
		if err := json.Unmarshal(sc.Bytes(), &le); err != nil {
			return nil, fmt.Errorf("%s:%d: not a request log line: %v", name, line, err)
		}
		if le.Status != 200 || (len(le.Response) == 0 && le.Body == "") {
			continue
		}
		body := []byte(le.Body) // a streamed answer is logged as its text
		if len(le.Response) > 0 {
			body = le.Response
		}
		a, e := readAnswer(body, "")
		if e != nil {
			continue
		}
		_, msgs, err := DecodeRequest(le.Request)
		if err != nil || len(msgs) == 0 {
			return nil, fmt.Errorf("%s:%d: request: %v", name, line, err)
		}
		rp.answers[Tag{le.Episode, le.Turn}] = logged{msgs[len(msgs)-1].Text, a.text, a.finish == "length"}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return rp, nil
}

// Chat implements the simulator's Chatter from the log.
func (rp *Replay) Chat(_ context.Context, tag Tag, msgs []Message) (string, error) {
	l, ok := rp.answers[tag]
	if !ok {
		return "", fmt.Errorf("the log has no answer for %s turn %d", tag.Episode, tag.Turn)
	}
	if q := msgs[len(msgs)-1].Text; q != l.question {
		return "", fmt.Errorf("the run asks %q where the log asked %q: replay with the logged run's scenes, --model, --turns, --difficulty and --seed", q, l.question)
	}
	if l.truncated {
		return l.answer, &Error{Kind: KindTruncated, Attempts: 1}
	}
	return l.answer, nil
}
