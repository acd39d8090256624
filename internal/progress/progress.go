// Package progress shows how far a long command has come: on a terminal a bar with the count,
// the rate and the time left, then one summary line; nothing at all when the output is not a
// terminal (a pipe, a file, a test's buffer) or the user asked for quiet. Work reports through
// Bar.Report, a func(done, total int64) that internal packages take as a callback, so they
// never print.
//
// The bar is drawn by github.com/schollz/progressbar/v3: a small, maintained library that
// computes the rate and the remaining time, throttles redraws and clears its line, which we
// would otherwise write by hand. (bubbles/progress, already a dependency, only renders a bar
// inside a Bubble Tea program: rate, ETA and redrawing would be ours to write.)
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
)

// Unit is what a bar counts.
type Unit struct {
	Name  string // plural, e.g. "records"
	Bytes bool   // counts bytes: shown as kB, MB
}

// Common units.
var (
	Bytes   = Unit{Name: "bytes", Bytes: true}
	Records = Unit{Name: "records"}
)

// redraw is the longest a bar waits between redraws; a terminal needs no more.
const redraw = 100 * time.Millisecond

// Bar is one piece of long work's progress. A nil *Bar and a silent one do nothing, so
// callers need no checks.
type Bar struct {
	mu    sync.Mutex
	pb    *progressbar.ProgressBar // nil: silent
	w     io.Writer
	label string
	unit  Unit
	start time.Time
	done  int64
	total int64
	ended bool
	// reported: the work reported at least once. Work that never does (import --demo, which
	// reads embedded files) leaves no summary of nothing.
	reported bool
}

// IsTerminal tells whether w is a terminal: only there is a bar drawn.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// New starts a bar labelled label for total units of work (-1: not known yet, a spinner)
// drawn on w when w is a terminal and quiet is false; otherwise the Bar is silent.
func New(w io.Writer, quiet bool, label string, total int64, unit Unit) *Bar {
	b := &Bar{w: w, label: label, unit: unit, start: time.Now(), total: total}
	if quiet || !IsTerminal(w) {
		return b
	}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(label),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true), // [elapsed:left]
		progressbar.OptionThrottle(redraw),
		progressbar.OptionUseANSICodes(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSpinnerType(14),
		// No redraw goroutine: the spinner turns on reports. Every call into the bar is then
		// made under b.mu (the library's Clear takes no lock of its own).
		progressbar.OptionSetSpinnerChangeInterval(0),
	}
	if unit.Bytes {
		opts = append(opts, progressbar.OptionShowBytes(true)) // the rate in B/s
	} else {
		opts = append(opts, progressbar.OptionShowIts(), progressbar.OptionSetItsString(unit.Name))
	}
	b.pb = progressbar.NewOptions64(total, opts...)
	return b
}

// Report sets the work done so far and the total (-1: unknown; a changed total is taken).
// It has the shape of internal packages' progress callbacks (Func) and may be called from
// any goroutine.
func (b *Bar) Report(done, total int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.set(done, total)
}

// Add counts n more units done; workers may add at once.
func (b *Bar) Add(n int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.set(b.done+n, b.total)
}

// set updates the count and redraws; b.mu is held.
func (b *Bar) set(done, total int64) {
	b.done, b.reported = done, true
	if b.pb == nil || b.ended {
		b.total = total
		return
	}
	if total != b.total {
		b.total = total
		b.pb.ChangeMax64(total)
	}
	_ = b.pb.Set64(done) // a failed redraw of the terminal is not the work's failure
}

// Finish clears the bar and, on a terminal, prints one summary line: the work done, the time
// and the rate. A second call does nothing.
func (b *Bar) Finish() { b.end(true) }

// Stop clears the bar without a summary, e.g. when the work failed; its error says the rest.
func (b *Bar) Stop() { b.end(false) }

func (b *Bar) end(summary bool) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pb == nil || b.ended {
		return
	}
	b.ended = true
	_ = b.pb.Clear()
	if summary && b.reported {
		fmt.Fprintln(b.w, Summary(b.label, b.done, time.Since(b.start), b.unit))
	}
}

// Summary is the line a finished bar leaves: "import: 12000 records in 2.4s (5000 records/s)".
func Summary(label string, done int64, took time.Duration, unit Unit) string {
	rate := 0.0
	if s := took.Seconds(); s > 0 {
		rate = float64(done) / s
	}
	took = took.Round(time.Millisecond)
	if unit.Bytes {
		return fmt.Sprintf("%s: %s in %s (%s/s)", label, byteSize(float64(done)), took, byteSize(rate))
	}
	return fmt.Sprintf("%s: %d %s in %s (%.0f %s/s)", label, done, unit.Name, took, rate, unit.Name)
}

// byteSize writes n bytes in SI units, as the bar does.
func byteSize(n float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB"}
	i := 0
	for n >= 1000 && i < len(units)-1 {
		n /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f %s", n, units[i])
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}

// Func is the shape of the progress callbacks internal packages take: the work done so far
// and the total (-1: unknown). A nil Func reports nothing.
type Func func(done, total int64)

// Tee returns a Func that tells every one of fs that is not nil, in order: a command's bar
// and an observer the caller set (a test's, or a library user's) both hear of the work.
func Tee(fs ...Func) Func {
	return func(done, total int64) {
		for _, f := range fs {
			f.Report(done, total)
		}
	}
}

// Report calls f if it is not nil.
func (f Func) Report(done, total int64) {
	if f != nil {
		f(done, total)
	}
}

// Reader returns r counting the bytes read through it, reported to f with total (a file's
// size, or -1): reading a file is then the progress of the work that reads it.
func Reader(r io.Reader, total int64, f Func) io.Reader {
	if f == nil {
		return r
	}
	return &countingReader{r: r, total: total, f: f}
}

type countingReader struct {
	r     io.Reader
	done  int64
	total int64
	f     Func
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.done += int64(n)
		c.f(c.done, c.total)
	}
	return n, err
}

// Above returns a writer whose lines appear above the bar: each write first clears the bar's
// line (the next report draws it again). Commands route what the work prints through it.
func (b *Bar) Above(w io.Writer) io.Writer {
	if b == nil || b.pb == nil {
		return w
	}
	return &aboveWriter{b: b, w: w}
}

type aboveWriter struct {
	b *Bar
	w io.Writer
	// midLine: the last write did not end its line. Clearing then would wipe the start of
	// the line the caller is still writing (a summary printed as Fprintf, then Fprintln).
	midLine bool
}

func (a *aboveWriter) Write(p []byte) (int, error) {
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	if !a.b.ended && !a.midLine {
		_ = a.b.pb.Clear()
	}
	n, err := a.w.Write(p)
	if n > 0 {
		a.midLine = p[n-1] != '\n'
	}
	return n, err
}

// Files reports reading several files as one piece of work: bytes read of all of them, out of
// the sum of their sizes (-1 when one cannot be known, e.g. standard input "-").
type Files struct {
	f      Func
	sizes  []int64
	total  int64
	i      int   // the file being read
	before int64 // bytes of the files before it
	cur    int64 // bytes read of it
}

// NewFiles starts reporting the reading of paths, in that order, to f (nil: nothing).
func NewFiles(paths []string, f Func) *Files {
	p := &Files{f: f, sizes: make([]int64, len(paths))}
	for i, path := range paths {
		p.sizes[i] = -1
		if fi, err := os.Stat(path); path != "-" && err == nil && fi.Mode().IsRegular() {
			p.sizes[i] = fi.Size()
		}
		if p.sizes[i] < 0 || p.total < 0 {
			p.total = -1
		} else {
			p.total += p.sizes[i]
		}
	}
	return p
}

// Reader returns r, the current file, counting what is read through it.
func (p *Files) Reader(r io.Reader) io.Reader {
	if p.f == nil {
		return r
	}
	return Reader(r, -1, func(done, _ int64) {
		p.cur = done
		p.f(p.before+done, p.total)
	})
}

// Next says the current file is done (read through Reader or otherwise) and moves to the next.
func (p *Files) Next() {
	size := p.cur
	if p.i < len(p.sizes) && p.sizes[p.i] > size {
		size = p.sizes[p.i]
	}
	p.before += size
	p.cur = 0
	p.i++
	p.f.Report(p.before, p.total)
}
