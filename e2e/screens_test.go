package e2e

import (
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The screens of issue 11 in a real terminal: the image preview in true colour from a
// database used in another directory, the full-screen image view, the reading view keeping its place through resizes,
// and a submitted item that opens read-only.

// screensData writes an episode in data/ whose image is a relative path beside it: turn 1
// (to be submitted) and turn 2, whose response is 200 short numbered lines.
func screensData(t *testing.T, dir string) string {
	t.Helper()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 80, 60))
	for y := 0; y < 60; y++ {
		for x := 0; x < 80; x++ {
			img.SetRGBA(x, y, color.RGBA{200, 30, 30, 255})
		}
	}
	f, err := os.Create(filepath.Join(data, "red.png"))
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var long []string
	for i := 1; i <= 200; i++ {
		long = append(long, fmt.Sprintf("L%03d reasoning step", i))
	}
	turn := func(n int, action, response string) map[string]any {
		return map[string]any{"sample_id": fmt.Sprintf("ep_turn_%d", n), "episode_id": "ep", "turn": n,
			"action_type": action, "task_type": "colour", "user_message": "What colour is the square?",
			"vlm_response": response, "expected_answer": "red"}
	}
	ep := map[string]any{"episode_id": "ep", "images": []string{"red.png"},
		"turns": []any{turn(1, "initial", "It is red."), turn(2, "follow_up", strings.Join(long, "\n"))}}
	b, _ := json.Marshal(ep)
	p := filepath.Join(data, "ep.jsonl")
	if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// topLine is the first "Lnnn" visible in the reading view.
var topLine = regexp.MustCompile(`L(\d{3}) reasoning step`)

// linesBelow is the reading view's position: "▼ 143 lines below".
var linesBelow = regexp.MustCompile(`▼ (\d+) lines below`)

func TestScreensPreviewReadingReadOnly(t *testing.T) {
	term := newTerminal(t)
	bin := build(t)
	dir := t.TempDir()
	src := screensData(t, dir)
	db := filepath.Join(dir, "s.db")
	imp := exec.Command(bin, "--db", db, "import", src)
	imp.Dir = dir
	if out, err := imp.CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	// annotate runs from / : the image path was stored resolved.
	cmd := fmt.Sprintf("cd / && COLORTERM=truecolor exec %s --db %s annotate --annotator ann", bin, db)
	term.tmux("new-session", "-d", "-s", "s", "-x", "80", "-y", "24", cmd)

	// The preview: pixels in true colour beside the conversation, with its caption.
	term.waitFor("s", "ep · turn 1", "red.png 80×60")
	colour := term.tmux("capture-pane", "-e", "-p", "-t", "s")
	if !strings.Contains(colour, "48;2;200;30;30") || !strings.Contains(colour, "▀") {
		t.Fatalf("no true-colour preview on screen:\n%s", colour)
	}

	// The full-screen image view (i): half-blocks inside tmux (no graphics protocol passes
	// through it), far larger than the preview; z zooms; esc goes back to the rubric.
	term.keys("s", "i")
	// Settled: a capture can catch the frame half drawn, with the caption but not all pixels.
	full := term.waitSettled("s", "image 1/1 · red.png · fit · none")
	if n := strings.Count(full, "▀"); n < 15*40 { // the preview has about 12×5
		t.Fatalf("the full-screen image has %d cells:\n%s", n, full)
	}
	term.keys("s", "z")
	term.waitFor("s", "image 1/1 · red.png · zoom · rows 1–19 of 30")
	term.keys("s", "Escape")
	term.waitFor("s", "Rubric", "red.png 80×60")

	// Submit turn 1 (its Yes/No/NA fields are fixed): 4, 4, Overall 4.
	term.keys("s", "4", "4", "4")
	term.waitFor("s", "Overall Quality        整体质量      4", "✓ saved")
	term.keys("s", "Enter")
	term.waitFor("s", "ep · turn 2", "submitted")

	// Turn 2's response is long: the context pane says how much is below.
	term.waitFor("s", "lines below")
	// The reading view, paged down twice, then resized: the same line stays on top.
	term.keys("s", "r")
	term.waitFor("s", "reading · ep · turn 2", "L001 reasoning step")
	// Each page waits for the paged state itself (the top line moved): "lines below" was on
	// screen before the key acted.
	var before []string
	below0 := ""
	for _, from := range []string{"001", ""} {
		if from == "" {
			from = before[1]
		}
		term.keys("s", "Space")
		term.until("s", "the reading view paged down from L"+from, func(s string) bool {
			before = topLine.FindStringSubmatch(s)
			b := linesBelow.FindStringSubmatch(s)
			if b != nil {
				below0 = b[1]
			}
			return before != nil && before[1] != from && b != nil
		})
	}
	// The count of lines below follows the view's height: when it changes, the resized
	// view was drawn (tmux crops or pads the old frame at once, before the program redraws).
	term.tmux("resize-window", "-t", "s", "-x", "120", "-y", "40")
	s := term.until("s", "the reading view redrawn at 120×40", func(s string) bool {
		b := linesBelow.FindStringSubmatch(s)
		return b != nil && b[1] != below0 && strings.Contains(s, "reading · ep · turn 2")
	})
	if after := topLine.FindStringSubmatch(s); after == nil || after[1] != before[1] {
		t.Fatalf("resize moved the reading view from line %s:\n%s", before[1], s)
	}
	term.tmux("resize-window", "-t", "s", "-x", "80", "-y", "24")
	s = term.until("s", "the reading view redrawn at 80×24", func(s string) bool {
		b := linesBelow.FindStringSubmatch(s)
		return b != nil && b[1] == below0
	})
	if after := topLine.FindStringSubmatch(s); after == nil || after[1] != before[1] {
		t.Fatalf("resize back moved the reading view from line %s:\n%s", before[1], s)
	}
	term.keys("s", "End")
	term.waitFor("s", "L200 reasoning step")
	term.keys("s", "Escape")
	term.waitFor("s", "Rubric", "? help", "q quit")

	// Back on the submitted turn 1: read-only; a stray digit changes nothing.
	term.keys("s", "Left")
	term.waitFor("s", "ep · turn 1", "submitted · e to edit")
	term.keys("s", "1")
	term.waitFor("s", "a stray key does not change a finished label", "Correctness            正确性        4")
	term.keys("s", "e", "2")
	term.waitFor("s", "Correctness            正确性        2", "✓ saved")
	term.keys("s", "q")

	recs, out := exportLabels(t, bin, db)
	if len(recs) != 1 || recs[0].SampleID != "ep_turn_1" || string(recs[0].Label["correctness"]) != "2" {
		t.Fatalf("export after the edit: %s", out)
	}
}
