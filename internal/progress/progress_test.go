package progress_test

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/m3bench/m3eval/internal/progress"
)

// drive reports 100 records in steps slower than the bar's redraw, then finishes.
func drive(b *progress.Bar) {
	for done := int64(0); done <= 100; done += 25 {
		b.Report(done, 100)
		time.Sleep(150 * time.Millisecond)
	}
	b.Finish()
	b.Finish() // a second call prints nothing more
}

// TestBarOnTerminal draws on a real pseudo-terminal: the bar shows the count, the rate and
// the time left, and is replaced by one summary line.
func TestBarOnTerminal(t *testing.T) {
	out := onPty(t, func(tty *os.File) {
		if !progress.IsTerminal(tty) {
			t.Fatal("a pty is not taken for a terminal")
		}
		drive(progress.New(tty, false, "import", 100, progress.Records))
	})

	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`import\s+\d+%`),                                             // the label and percentage
		regexp.MustCompile(`\(50/100, \d+ records/s\)`),                                 // count and rate
		regexp.MustCompile(`\[\d+s:\d+s\]`),                                             // elapsed:left
		regexp.MustCompile(`import: 100 records in [0-9.]+m?s \(\d+ records/s\)\r?\n$`), // summary
	} {
		if !want.MatchString(out) {
			t.Errorf("terminal output lacks %s:\n%q", want, out)
		}
	}
	if n := strings.Count(out, "records in"); n != 1 {
		t.Errorf("%d summary lines, want 1:\n%q", n, out)
	}
}

// TestSilentOffTerminal: into a pipe, and with quiet on a terminal, nothing is written.
func TestSilentOffTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if progress.IsTerminal(w) {
		t.Fatal("a pipe is taken for a terminal")
	}
	drive(progress.New(w, false, "import", 100, progress.Records))
	w.Close()
	if b, _ := io.ReadAll(r); len(b) != 0 {
		t.Errorf("into a pipe: %q", b)
	}

	if out := onPty(t, func(tty *os.File) { drive(progress.New(tty, true, "import", 100, progress.Records)) }); out != "" {
		t.Errorf("with quiet: %q", out)
	}

	var nilBar *progress.Bar
	nilBar.Report(1, 2)
	nilBar.Finish()
}

func TestSummary(t *testing.T) {
	for _, tc := range []struct {
		done int64
		took time.Duration
		unit progress.Unit
		want string
	}{
		{12000, 2400 * time.Millisecond, progress.Records, "import: 12000 records in 2.4s (5000 records/s)"},
		{25_000_000, 2 * time.Second, progress.Bytes, "import: 25.0 MB in 2s (12.5 MB/s)"},
		{0, 0, progress.Records, "import: 0 records in 0s (0 records/s)"},
	} {
		if got := progress.Summary("import", tc.done, tc.took, tc.unit); got != tc.want {
			t.Errorf("Summary(%d, %s) = %q, want %q", tc.done, tc.took, got, tc.want)
		}
	}
}

func TestReader(t *testing.T) {
	var got [][2]int64
	r := progress.Reader(strings.NewReader("hello, world"), 12, func(done, total int64) { got = append(got, [2]int64{done, total}) })
	b, err := io.ReadAll(io.LimitReader(r, 5))
	if err != nil || string(b) != "hello" {
		t.Fatal(string(b), err)
	}
	if rest, _ := io.ReadAll(r); string(rest) != ", world" {
		t.Fatal(string(rest))
	}
	if len(got) < 2 || got[0] != [2]int64{5, 12} || got[len(got)-1] != [2]int64{12, 12} {
		t.Errorf("reports %v", got)
	}
	var f progress.Func
	f.Report(1, 2) // nil: nothing
	if progress.Reader(strings.NewReader("x"), 1, nil) == nil {
		t.Error("nil callback: no reader")
	}
}

// TestStop: a stopped bar leaves no summary line.
func TestStop(t *testing.T) {
	out := onPty(t, func(tty *os.File) {
		b := progress.New(tty, false, "convert", -1, progress.Records)
		b.Add(3)
		b.Stop()
		b.Finish()
	})
	if !strings.Contains(out, "convert") || strings.Contains(out, "records in") {
		t.Errorf("stopped bar: %q", out)
	}
}

// TestConcurrentReports: workers may report at once (run with -race).
func TestConcurrentReports(t *testing.T) {
	out := onPty(t, func(tty *os.File) {
		b := progress.New(tty, false, "score", 4000, progress.Unit{Name: "replicates"})
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 1000; i++ {
					b.Add(1)
				}
			}()
		}
		wg.Wait()
		b.Finish()
	})
	if !strings.Contains(out, "score: 4000 replicates in ") {
		t.Errorf("summary after concurrent reports: %q", out)
	}
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := dir+"/a", dir+"/b"
	os.WriteFile(a, []byte("0123456789"), 0o644)
	os.WriteFile(b, []byte("01234"), 0o644)
	var last [2]int64
	p := progress.NewFiles([]string{a, b}, func(done, total int64) { last = [2]int64{done, total} })
	io.ReadAll(p.Reader(strings.NewReader("0123456789")))
	if last != [2]int64{10, 15} {
		t.Errorf("after a: %v", last)
	}
	p.Next()
	io.ReadAll(io.LimitReader(p.Reader(strings.NewReader("01234")), 2))
	if last != [2]int64{12, 15} {
		t.Errorf("in b: %v", last)
	}
	p.Next() // b was read otherwise (e.g. a spreadsheet library): its size counts
	if last != [2]int64{15, 15} {
		t.Errorf("after b: %v", last)
	}
	// Standard input has no size: the total is unknown.
	p = progress.NewFiles([]string{a, "-"}, func(done, total int64) { last = [2]int64{done, total} })
	p.Next()
	if last != [2]int64{10, -1} {
		t.Errorf("with stdin: %v", last)
	}
	progress.NewFiles([]string{a}, nil).Next() // nil: nothing
}

// TestAbove: a line printed during the work clears the bar first.
func TestAbove(t *testing.T) {
	out := onPty(t, func(tty *os.File) {
		b := progress.New(tty, false, "import", 10, progress.Records)
		b.Report(5, 10)
		io.WriteString(b.Above(tty), "a.jsonl: 5 turns new\n")
		b.Finish()
	})
	if !strings.Contains(out, "\x1b[2K\ra.jsonl: 5 turns new") {
		t.Errorf("the line does not start on a cleared line: %q", out)
	}
	var buf bytes.Buffer
	if w := progress.New(&buf, false, "x", 1, progress.Records).Above(&buf); w != &buf {
		t.Error("a silent bar wraps the writer")
	}
}

// TestAboveLineInPieces: a line written in pieces (Fprintf, then Fprintln) is not cleared
// between them; simulate's summary was wiped on a terminal that way, leaving no summary.
func TestAboveLineInPieces(t *testing.T) {
	out := onPty(t, func(tty *os.File) {
		b := progress.New(tty, false, "simulate", 10, progress.Records)
		b.Report(5, 10)
		w := b.Above(tty)
		io.WriteString(w, "simulate: 6 of 6 episodes")
		io.WriteString(w, " written\n")
		b.Stop()
	})
	if !strings.Contains(out, "simulate: 6 of 6 episodes written") {
		t.Errorf("the line was cleared between its pieces: %q", out)
	}
}

// onPty runs write with the terminal side of a fresh pseudo-terminal and returns all that
// reached the terminal.
func onPty(t *testing.T, write func(tty *os.File)) string {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	read := make(chan string)
	go func() {
		b, _ := io.ReadAll(ptmx) // ends with EIO once the tty side is closed
		read <- string(b)
	}()
	write(tty)
	tty.Close()
	return <-read
}
