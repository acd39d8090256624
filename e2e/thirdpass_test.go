package e2e

// The third pass over the annotator and the adjudicator (issue 40), in a real terminal
// (tmux), each test checking the database as well as the screen.

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dbString runs a query that returns one text value (sql.ErrNoRows gives "<none>").
func dbString(t *testing.T, db, query string, args ...any) string {
	t.Helper()
	conn, err := sql.Open("sqlite3", "file:"+db+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var v sql.NullString
	err = conn.QueryRow(query, args...).Scan(&v)
	if err == sql.ErrNoRows {
		return "<none>"
	}
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v.String
}

// valueOf reads an annotator's value of a field on a turn ("<none>" when unanswered).
func valueOf(t *testing.T, db, annotator, sample, field string) string {
	t.Helper()
	return dbString(t, db, `SELECT v.value FROM annotation_values v JOIN annotations a ON a.id = v.annotation_id
		JOIN turns t ON t.id = a.turn_id JOIN annotators an ON an.id = a.annotator_id
		WHERE an.name = ? AND t.sample_id = ? AND v.field = ?`, annotator, sample, field)
}

// waitValue waits until an annotator's value of a field on a turn is want (the screen shows a
// value as soon as it is typed; the database has it once the write lands).
func waitValue(t *testing.T, db, annotator, sample, field, want string) {
	t.Helper()
	deadline := time.Now().Add(waitDeadline)
	for {
		got := valueOf(t, db, annotator, sample, field)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s's %s of %s to be %q in the database; it is %q", waitDeadline, annotator, field, sample, want, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// statusOf reads an annotator's status on a turn.
func statusOf(t *testing.T, db, annotator, sample string) string {
	t.Helper()
	return dbString(t, db, `SELECT a.status FROM annotations a JOIN turns t ON t.id = a.turn_id
		JOIN annotators an ON an.id = a.annotator_id WHERE an.name = ? AND t.sample_id = ?`, annotator, sample)
}

// startSized runs the command in a window of the given size.
func (term *terminal) startSized(name string, w, h int, command string) int {
	pid := term.start(name, command)
	term.tmux("resize-window", "-t", name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h))
	return pid
}

// fillItem answers every open field of the item on screen with 3 or y (a digit on a choice
// field and a letter on a scale are refused with a message, so the pair fits either kind)
// without submitting.
func (term *terminal) fillItem(name string) {
	for i := 0; i < 6; i++ {
		term.keys(name, "3", "y")
	}
}

// TestFlagInCampaignGoesToReview (issue 40 item 1): alice flags a turn of a campaign and
// submits it; adjudicate --list lists it with her reason; export --final keeps the flag
// and the reason; the adjudication screen shows it, and f clears it (in the database), after
// which export --final writes the label unflagged.
func TestFlagInCampaignGoesToReview(t *testing.T) {
	term := newTerminal(t)
	bin := binary(t)
	db := filepath.Join(t.TempDir(), "flags.db")
	m3 := cli(t, bin, db)
	m3("import", "--demo")
	m3("sample", "--name", "pilot", "--n", "6", "--by", "action_type", "--seed", "3")
	var a struct {
		Annotators []struct {
			Name      string   `json:"name"`
			SampleIDs []string `json:"sample_ids"`
		} `json:"annotators"`
	}
	if err := json.Unmarshal([]byte(m3("assign", "--sample", "pilot", "--annotators", "alice,bob", "--overlap", "2", "--format", "json")), &a); err != nil {
		t.Fatal(err)
	}
	first := a.Annotators[0].SampleIDs[0]
	const reason = "image missing; judged from expected answer only"

	term.startSized("f", 80, 24, fmt.Sprintf("%s --db %s annotate --annotator alice", bin, db))
	term.waitFor("f", "alice · campaign pilot", "0 done")
	term.keys("f", "f")
	term.tmux("send-keys", "-t", "f", "-l", reason)
	term.keys("f", "Enter")
	term.waitFor("f", "flagged for review")
	term.fillItem("f")
	term.keys("f", "Enter")
	term.waitFor("f", "1 done", "submitted")
	term.keys("f", "q")
	if got := statusOf(t, db, "alice", first); got != "done" {
		t.Fatalf("alice's flagged label of %s is %q in the database, want done", first, got)
	}

	list := m3("adjudicate", "--list", "--campaign", "pilot")
	if !strings.Contains(list, first) || !strings.Contains(list, "flagged by alice: "+reason) {
		t.Fatalf("adjudicate --list does not list alice's flag:\n%s", list)
	}
	final := func() map[string]any {
		t.Helper()
		for _, line := range strings.Split(m3("export", "--final", "--campaign", "pilot", "--format", "jsonl"), "\n") {
			if strings.Contains(line, `"sample_id":"`+first+`"`) {
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatal(err)
				}
				label, _ := rec["human_annotation"].(map[string]any)
				return label
			}
		}
		t.Fatalf("export --final wrote no label for %s", first)
		return nil
	}
	if l := final(); l["flagged"] != true || l["flag_reason"] != "alice: "+reason || l["final_source"] != "single" {
		t.Fatalf("export --final before review: %v", l)
	}

	pid := term.startSized("j", 80, 24, fmt.Sprintf("%s --db %s adjudicate --adjudicator judy --campaign pilot", bin, db))
	term.waitFor("j", first, "⚑ A alice flagged (f clears): image missing", "1 open")
	term.keys("j", "f")
	term.waitFor("j", "⚑ A alice flagged (cleared)", "0 open", "✓ saved")
	term.keys("j", "q")
	waitExit(t, pid)
	if got := dbString(t, db, `SELECT f.value || ' by ' || f.adjudicator FROM final_labels f JOIN turns t ON t.id = f.turn_id
		WHERE t.sample_id = ? AND f.field = '#flag'`, first); got != "cleared by judy" {
		t.Fatalf("the cleared flag in the database: %q", got)
	}
	if l := final(); l["flagged"] != false || l["flag_reason"] != nil {
		t.Fatalf("export --final after review: %v", l)
	}
	if list := m3("adjudicate", "--list", "--campaign", "pilot"); !strings.Contains(list, "0 still open") {
		t.Fatalf("adjudicate --list after review:\n%s", list)
	}
}

// TestEscBurstsActAsTyped (issue 40 item 2): Esc and the next key sent in one write (tmux
// send-keys with two keys, as SSH delivers them) both act: Esc u closes the comment box and
// undoes (no word upper-cased), Esc d closes it (no word deleted), Esc Enter closes and
// submits, Esc 5 in the reader closes it and scores 5; ctrl+s saves the comment and submits.
func TestEscBurstsActAsTyped(t *testing.T) {
	term := newTerminal(t)
	bin := binary(t)
	db := filepath.Join(t.TempDir(), "esc.db")
	m3 := cli(t, bin, db)
	m3("import", "--demo")
	const item1, item2, item3 = "demo_zh_umbrella_0_turn_1", "demo_zh_umbrella_0_turn_2", "demo_zh_umbrella_0_turn_3"
	term.startSized("e", 80, 24, fmt.Sprintf("%s --db %s annotate --annotator alice", bin, db))
	term.waitFor("e", "item 1 of 35")

	// Esc u: the box closes (saving the comment) and u undoes that save.
	term.keys("e", "c")
	term.waitFor("e", "esc when done · ctrl+s save & submit")
	term.tmux("send-keys", "-t", "e", "-l", "the dog sat")
	term.tmux("send-keys", "-t", "e", "Escape", "u")
	term.waitFor("e", "undid Comments", "(none) — c to write")
	if got := valueOf(t, db, "alice", item1, "comments"); got != "<none>" {
		t.Fatalf("after Esc u the comment in the database is %q, want none", got)
	}
	if n := dbString(t, db, `SELECT count(*) FROM changes WHERE new_value GLOB '*THE*'`); n != "0" {
		t.Fatalf("Esc u upper-cased a word: %s change(s) hold THE", n)
	}

	// Esc d: the box closes with the comment whole.
	term.keys("e", "c")
	term.waitFor("e", "esc when done")
	term.tmux("send-keys", "-t", "e", "-l", "the dog sat")
	term.tmux("send-keys", "-t", "e", "Escape", "d")
	term.waitFor("e", "Comments               评论          the dog sat", "c comment")
	waitValue(t, db, "alice", item1, "comments", "the dog sat")

	// Esc Enter: the box closes and the item is submitted.
	term.fillItem("e")
	term.keys("e", "c")
	term.waitFor("e", "esc when done")
	term.tmux("send-keys", "-t", "e", "-l", " ok")
	term.tmux("send-keys", "-t", "e", "Escape", "Enter")
	term.waitFor("e", "item 2 of 35", "1 done")
	if st, c := statusOf(t, db, "alice", item1), valueOf(t, db, "alice", item1, "comments"); st != "done" || c != "the dog sat ok" {
		t.Fatalf("after Esc Enter item 1 is %q with comment %q, want done with \"the dog sat ok\"", st, c)
	}

	// Esc 5 in the reader: it closes and 5 scores the focused field (Correctness).
	term.keys("e", "r")
	term.waitFor("e", "esc back to the rubric")
	term.tmux("send-keys", "-t", "e", "Escape", "5")
	term.waitFor("e", "5 Fully right")
	waitValue(t, db, "alice", item2, "correctness", "5")

	// ctrl+s in the comment box: saved and submitted in one key.
	term.fillItem("e")
	term.keys("e", "c")
	term.waitFor("e", "esc when done")
	term.tmux("send-keys", "-t", "e", "-l", "sure")
	term.keys("e", "C-s")
	term.waitFor("e", "item 3 of 35", "2 done")
	if st, c := statusOf(t, db, "alice", item2), valueOf(t, db, "alice", item2, "comments"); st != "done" || c != "sure" {
		t.Fatalf("after ctrl+s item 2 is %q with comment %q", st, c)
	}
	if got := statusOf(t, db, "alice", item3); got != "<none>" && got != "draft" {
		t.Fatalf("item 3 is %q before anything was typed on it", got)
	}
}

// TestAnswerOnScreenAt80x24 (issue 40 item 3): at 80×24 the first line of the model's answer
// is on screen on every demo item and on a turn whose question and expected answer are long;
// scoring one of them lands in the database.
func TestAnswerOnScreenAt80x24(t *testing.T) {
	term := newTerminal(t)
	bin := binary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "read.db")
	m3 := cli(t, bin, db)
	m3("import", "--demo")
	long := strings.Repeat("The question goes on and on about the picture, its corners and its light. ", 12)
	rec := map[string]any{"episode_id": "long_ep", "turns": []map[string]any{{
		"sample_id": "long_ep_turn_1", "episode_id": "long_ep", "turn": 1, "action_type": "initial", "task_type": "counting",
		"user_message": long, "expected_answer": long, "vlm_response": "ANSWERSTART the model's answer follows here.",
	}}}
	b, _ := json.Marshal(rec)
	p := filepath.Join(dir, "long.jsonl")
	if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	m3("import", p)

	// The queue: the demo's turns in file order, then the long one.
	n := 1
	demo, err := os.ReadFile("../annotations/demo/episodes.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(demo)), "\n") {
		var ep struct {
			Turns []any `json:"turns"`
		}
		if err := json.Unmarshal([]byte(line), &ep); err != nil {
			t.Fatal(err)
		}
		n += len(ep.Turns)
	}
	term.startSized("r", 80, 24, fmt.Sprintf("%s --db %s annotate --annotator zed", bin, db))
	for i := 0; i < n; i++ {
		s := term.waitSettled("r", fmt.Sprintf("item %d of %d", i+1, n))
		found := false
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "Model   ") {
				found = true
			}
		}
		if !found {
			t.Fatalf("item %d at 80×24: the answer's first line is not on screen:\n%s", i+1, s)
		}
		if i+1 < n {
			term.keys("r", "Right")
		}
	}
	s := term.waitFor("r", "Model   ANSWERSTART")
	if !strings.Contains(s, "earlier above") && !strings.Contains(s, "long_ep") {
		t.Fatalf("the long turn:\n%s", s)
	}
	term.keys("r", "4")
	term.waitFor("r", "4 Mostly right")
	waitValue(t, db, "zed", "long_ep_turn_1", "correctness", "4")
}

// writeLabels writes labels of the demo's turns that vals gives (nil: not labeled).
func writeLabels(t *testing.T, path string, vals func(sample string) map[string]any) {
	t.Helper()
	demo, err := os.ReadFile("../annotations/demo/episodes.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(demo)), "\n") {
		var ep struct {
			Turns []map[string]any `json:"turns"`
		}
		if err := json.Unmarshal([]byte(line), &ep); err != nil {
			t.Fatal(err)
		}
		for _, turn := range ep.Turns {
			v := vals(turn["sample_id"].(string))
			if v == nil {
				continue
			}
			turn["human_annotation"] = v
			out, _ := json.Marshal(turn)
			b.Write(out)
			b.WriteByte('\n')
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAdjudicationThirdPass (issue 40 items 5–7) at 80×24: "agreed" only where every
// annotator gave the value, else a marked proposal; a capital letter takes a field and
// leaves the comment, t and a letter take the whole label with its comment; the comment box
// starts empty; the weighted suggestion, the meanings and the earlier turns (pgup) are
// shown, and scrolling writes nothing.
func TestAdjudicationThirdPass(t *testing.T) {
	term := newTerminal(t)
	bin := binary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "adj3.db")
	m3 := cli(t, bin, db)
	m3("import", "--demo")
	const turn1, turn2 = "demo_zh_umbrella_0_turn_1", "demo_zh_umbrella_0_turn_2"
	labels := map[string]map[string]map[string]any{
		"ann": {
			turn1: {"correctness": 2, "reasoning_completeness": 3, "overall_quality": 2, "comments": ""},
			turn2: {"correctness": 2, "reasoning_completeness": 2, "overall_quality": 2, "context_consistency": "Yes", "comments": ""},
		},
		"ben": {
			turn1: {"correctness": 4, "reasoning_completeness": 2, "overall_quality": 3, "comments": "ben: looks fine"},
			turn2: {"correctness": 4, "reasoning_completeness": 4, "overall_quality": 4, "context_consistency": "Yes", "comments": ""},
		},
	}
	for who, byTurn := range labels {
		p := filepath.Join(dir, who+".jsonl")
		writeLabels(t, p, func(s string) map[string]any { return byTurn[s] })
		m3("import", "--annotator", who, p)
	}
	final := func(sample, field string) string {
		t.Helper()
		return dbString(t, db, `SELECT f.value || ' from ' || f.source FROM final_labels f JOIN turns t ON t.id = f.turn_id
			WHERE t.sample_id = ? AND f.field = ?`, sample, field)
	}
	row := func(s, field string) string {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, field) {
				return l
			}
		}
		return ""
	}

	pid := term.startSized("a", 80, 24, fmt.Sprintf("%s --db %s adjudicate --adjudicator judy", bin, db))
	s := term.waitSettled("a", turn1, "turn 1 of 2", "≠ Correctness")
	// Item 5: 3 vs 2 is close (no dispute) but not agreed: a proposal, marked so.
	if r := row(s, "Reasoning Completeness"); !strings.Contains(r, "3 proposed") || strings.Contains(r, "agreed") {
		t.Errorf("Reasoning Completeness (ann 3, ben 2) shows %q, want a marked proposal", r)
	}
	if r := row(s, "Overall Quality  "); !strings.Contains(r, "3 proposed") {
		t.Errorf("Overall Quality (ann 2, ben 3) shows %q", r)
	}
	// Item 7: the weighted suggestion and what the focused field's values mean.
	if !strings.Contains(s, "suggested by the guide's weights") || !strings.Contains(s, "Correctness: 1 Wrong · 2 Mostly wrong") {
		t.Errorf("no weighted suggestion or meanings:\n%s", s)
	}

	// Item 6: A takes ann's Correctness; the comment stays undecided.
	term.keys("a", "A")
	term.waitFor("a", "Correctness = 2 saved")
	if got, c := final(turn1, "correctness"), final(turn1, "comments"); got != "2 from ann" || c != "<none>" {
		t.Fatalf("after A: correctness %q, comment %q; want 2 from ann and no comment decided", got, c)
	}
	// t B takes ben's whole label, his comment with it.
	term.keys("a", "t")
	term.waitFor("a", "take whose whole label")
	term.keys("a", "B")
	term.waitFor("a", "final comment: ben: looks fine (B)")
	if got, c := final(turn1, "overall_quality"), final(turn1, "comments"); got != "3 from ben" || c != "ben: looks fine from ben" {
		t.Fatalf("after t B: overall %q, comment %q", got, c)
	}
	// The adjudicator's comment box starts empty.
	term.keys("a", "c")
	s = term.waitSettled("a", "Your comment:")
	if r := row(s, "Your comment:"); strings.Contains(r, "looks fine") {
		t.Fatalf("the adjudicator's comment box is pre-filled: %q", r)
	}
	term.keys("a", "Escape")
	term.waitFor("a", "comment not changed")

	// Turn 2: CC agreed by both; pgup shows turn 1 above, and writes nothing.
	term.keys("a", "Right")
	s = term.waitSettled("a", turn2, "turn 2 of 2")
	if r := row(s, "Context Consistency"); !strings.Contains(r, "Yes agreed") {
		t.Errorf("Context Consistency (both Yes) shows %q", r)
	}
	before := dbString(t, db, `SELECT count(*) FROM final_changes`)
	term.keys("a", "PPage")
	term.waitFor("a", "── turn 1 · initial", "图中有什么？")
	term.keys("a", "q")
	waitExit(t, pid)
	if after := dbString(t, db, `SELECT count(*) FROM final_changes`); after != before {
		t.Fatalf("scrolling wrote %s → %s adjudication changes", before, after)
	}
}

// TestHelpHasGuideCases (issue 40 item 8): ? holds the guide's edge cases (案例1–4, EN and ZH)
// and when a comment is required, reachable by scrolling at 80×24.
func TestHelpHasGuideCases(t *testing.T) {
	term := newTerminal(t)
	bin := binary(t)
	db := filepath.Join(t.TempDir(), "help.db")
	cli(t, bin, db)("import", "--demo")
	term.startSized("h", 80, 24, fmt.Sprintf("%s --db %s annotate --annotator alice", bin, db))
	term.waitFor("h", "item 1 of 35")
	term.keys("h", "?")
	term.waitFor("h", "m3eval — keys")
	term.keys("h", "End")
	term.waitFor("h", "A comment is required when · 必须写评论的情况", "模型被误导但整体评分为 4 或 5")
	seen := map[string]bool{}
	for i := 0; i < 80 && len(seen) < 4; i++ {
		s := term.screen("h")
		for _, c := range []string{"案例1", "案例2", "案例3", "案例4"} {
			if strings.Contains(s, c) {
				seen[c] = true
			}
		}
		term.keys("h", "Up")
	}
	if len(seen) < 4 {
		t.Fatalf("the help screen shows only %v of the guide's four edge cases", seen)
	}
}
