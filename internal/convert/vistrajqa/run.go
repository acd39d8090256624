package vistrajqa

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/m3bench/m3eval/internal/convert/domainav2"
	"github.com/m3bench/m3eval/internal/outfile"
	"github.com/m3bench/m3eval/internal/progress"
)

// Request is one conversion, m3eval convert vistrajqa's options: input files, output
// directory and mode (its flags and arguments), and the progress callback. The command
// parses its command line into one and calls Run; so do the tests (#42).
type Request struct {
	Inputs []string
	Output string
	Options
	// KeepGoing skips bad records (reported in Result.Skipped) instead of failing the run.
	KeepGoing bool
	// Force replaces an existing, non-empty Output.
	Force bool
	// Progress is told the bytes read of all inputs and their total size (nil: nothing).
	Progress progress.Func
}

// Result is what a successful run did.
type Result struct {
	Converted int
	Skipped   []*RecordError
	Report    *domainav2.Report // the validation of the written directory
}

// ErrOutputExists is returned when the output directory exists, is not empty and Force is off.
var ErrOutputExists = errors.New("output directory exists and is not empty")

// SourceName is the source of an input file for the statistics: sessions-vab.jsonl → vab.
func SourceName(path string) string {
	base := filepath.Base(path)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	if s := strings.TrimPrefix(base, "sessions-"); s != "" {
		return s
	}
	return base
}

// ConvertFiles converts the inputs into a new directory beside Output, validates it with
// domainav2.Validate and renames it to Output. Output is untouched unless all of that
// succeeds; the temporary directory is removed on failure. Memory holds a few batches of
// records at a time plus the sample ids (for duplicates and the manifest).
func ConvertFiles(ctx context.Context, opt Request) (*Result, error) {
	if len(opt.Inputs) == 0 {
		return nil, errors.New("no input file")
	}
	out := filepath.Clean(opt.Output)
	replace, err := checkOutput(out, opt.Force)
	if err != nil {
		return nil, err
	}
	// The output's parent is created as -o does elsewhere (converted/ of converted/all).
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, fmt.Errorf("create the directory of %s: %w", out, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("create temporary directory beside %s: %w", out, err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()

	res := &Result{}
	if err := write(ctx, tmp, opt, res); err != nil {
		return nil, err
	}
	rep, err := domainav2.Validate(tmp)
	if err != nil {
		return nil, err
	}
	rep.Dir = out
	res.Report = rep
	if !rep.OK() {
		// The reader admitted the records, so this is a bug of the converter, not the data.
		return res, fmt.Errorf("the converted output fails validation (a converter bug; please report it): %w", rep.Err())
	}
	// The files reached the disk as they were closed; the temporary directory's entries do
	// now, before the rename shows them, and the parent's after it (outfile.SyncDir).
	if err := outfile.SyncDir(tmp); err != nil {
		return nil, err
	}
	if err := install(tmp, out, replace); err != nil {
		return nil, err
	}
	done = true
	if err := outfile.SyncDir(filepath.Dir(out)); err != nil {
		return nil, err
	}
	return res, nil
}

// checkOutput refuses a non-empty existing output unless force is set; replace tells whether
// an existing directory must be moved away before the rename.
func checkOutput(out string, force bool) (replace bool, err error) {
	fi, err := os.Stat(out)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("output %s exists and is not a directory", out)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return false, err
	}
	if len(entries) > 0 && !force {
		return false, fmt.Errorf("%s: %w (choose another directory or pass --force)", out, ErrOutputExists)
	}
	return true, nil
}

// install renames tmp to out. An existing out is moved aside first and removed after, so a
// failure on the way leaves it in place. (os.Rename refuses an existing directory as the
// target, even an empty one.)
func install(tmp, out string, replace bool) error {
	if !replace {
		if err := os.Rename(tmp, out); err != nil {
			return fmt.Errorf("install %s: %w", out, err)
		}
		return nil
	}
	// A fresh unused name beside out: create it, then free it for the rename.
	old, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+".old-")
	if err != nil {
		return err
	}
	if err := os.Remove(old); err != nil {
		return err
	}
	if err := os.Rename(out, old); err != nil {
		return fmt.Errorf("move old %s aside: %w", out, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		if rerr := os.Rename(old, out); rerr != nil {
			return fmt.Errorf("install %s: %w (the previous output is in %s)", out, err, old)
		}
		return fmt.Errorf("install %s: %w", out, err)
	}
	return os.RemoveAll(old)
}

// outFile is a buffered output file.
type outFile struct {
	f *os.File
	w *bufio.Writer
}

// createOut creates a buffered output file in dir.
func createOut(dir, name string) (*outFile, error) {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	return &outFile{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// close flushes, syncs and closes the file, returning the first error: the directory is
// renamed into place only over files on the disk.
func (o *outFile) close() error {
	err := o.w.Flush()
	if err == nil {
		err = o.f.Sync()
	}
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// write converts every input into the three files and the manifest in dir.
func write(ctx context.Context, dir string, opt Request, res *Result) (err error) {
	var files [3]*outFile
	for i, name := range []string{domainav2.MainFile, domainav2.MemoryFile, domainav2.QAFile} {
		if files[i], err = createOut(dir, name); err != nil {
			return err
		}
		defer func(o *outFile) {
			if cerr := o.close(); err == nil && cerr != nil {
				err = cerr
			}
		}(files[i])
	}
	mainF, memF, qaF := files[0], files[1], files[2]

	mode := "text-only"
	if opt.Multimodal {
		mode = "multimodal"
	}
	man := domainav2.Manifest{Generator: "m3eval convert vistrajqa", Mode: mode, UUIDNamespace: NamespaceString}
	sourceIdx := map[string]int{}
	firstSeen := map[string]string{} // session_id -> file:line
	sep := "[\n"
	read := progress.NewFiles(opt.Inputs, opt.Progress)
	for _, in := range opt.Inputs {
		name := SourceName(in)
		si, ok := sourceIdx[name]
		if !ok {
			si = len(man.Sources)
			sourceIdx[name] = si
			man.Sources = append(man.Sources, domainav2.ManifestSource{Name: name, SampleIDs: []string{}})
		}
		man.Sources[si].Files = append(man.Sources[si].Files, filepath.Base(in))
		err := convertFile(ctx, in, read, opt, res, firstSeen, func(r *converted) error {
			if _, err := mainF.w.WriteString(sep); err != nil {
				return err
			}
			sep = ",\n"
			for _, w := range []struct {
				o *outFile
				b []byte
			}{{mainF, r.main}, {memF, r.mem}, {qaF, r.qa}} {
				if _, err := w.o.w.Write(w.b); err != nil {
					return err
				}
			}
			man.Sources[si].SampleIDs = append(man.Sources[si].SampleIDs, r.id)
			res.Converted++
			return nil
		})
		if err != nil {
			return err
		}
		read.Next()
	}
	if res.Converted == 0 {
		if len(res.Skipped) > 0 {
			return fmt.Errorf("no trajectory converted: all %d records are bad, first: %w", len(res.Skipped), res.Skipped[0])
		}
		return errors.New("no trajectory converted: the inputs are empty")
	}
	if _, err := mainF.w.WriteString("\n]\n"); err != nil {
		return err
	}
	b, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return err
	}
	return outfile.WriteFile(filepath.Join(dir, domainav2.ManifestFile), append(b, '\n'), 0o644)
}

// converted is one input line after parsing, mapping and encoding: either err is set or
// the three encoded records are (mem and qa end with a newline, main does not).
type converted struct {
	id            string
	err           *RecordError
	main, mem, qa []byte
}

// batch is a run of consecutive lines that one worker converts; done is closed when results
// is filled. Batches keep the channel traffic low and the output in input order.
type batch struct {
	lines   [][]byte
	first   []int // line number of each line
	results []converted
	err     error // a read error after the lines (the stream cannot go on)
	done    chan struct{}
}

// batchLines is the number of lines per batch: enough to make hand-offs cheap, few enough
// (about 1 MB of typical input) that memory stays flat.
const batchLines = 32

func (b *batch) convert(rd *Reader, opt Options) error {
	b.results = make([]converted, len(b.lines))
	for i, line := range b.lines {
		r := &b.results[i]
		t, err := rd.parse(line, b.first[i])
		if err != nil {
			r.err = err.(*RecordError)
			continue
		}
		sample, mem, qa := Convert(t, opt)
		r.id = t.SessionID
		// jsonv2 leaves <, > and & as they are (captions hold them), like Python's json.dump.
		if r.main, err = jsonv2.Marshal(sample); err != nil {
			return err
		}
		if r.mem, err = jsonv2.Marshal(mem); err != nil {
			return err
		}
		if r.qa, err = jsonv2.Marshal(qa); err != nil {
			return err
		}
		r.mem = append(r.mem, '\n')
		r.qa = append(r.qa, '\n')
	}
	return nil
}

// convertFile reads one input and hands each good record to emit, in input order. Parsing,
// mapping and encoding run on GOMAXPROCS workers (they are most of the work); reading, the
// duplicate check and writing stay on one goroutine each, so the output is the same as a
// sequential run. At most a few batches are in flight: memory does not grow with the file.
func convertFile(ctx context.Context, path string, read *progress.Files, opt Request, res *Result, firstSeen map[string]string, emit func(*converted) error) (err error) {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rd := NewReader(read.Reader(f), path)

	ctx, cancel := context.WithCancel(ctx)
	workers := runtime.GOMAXPROCS(0)
	jobs := make(chan *batch, workers)
	order := make(chan *batch, 2*workers)
	var wg sync.WaitGroup
	var workErr atomic.Pointer[error]
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range jobs {
				if err := b.convert(rd, opt.Options); err != nil {
					workErr.CompareAndSwap(nil, &err)
				}
				close(b.done)
			}
		}()
	}
	go func() {
		defer close(order)
		defer close(jobs)
		for {
			b := &batch{done: make(chan struct{})}
			for len(b.lines) < batchLines {
				line, err := rd.nextLine()
				if err != nil {
					if err != io.EOF {
						b.err = err
					}
					break
				}
				b.lines = append(b.lines, bytes.Clone(line))
				b.first = append(b.first, rd.line)
			}
			if len(b.lines) == 0 && b.err == nil {
				return
			}
			select {
			case jobs <- b:
			case <-ctx.Done():
				return
			}
			select {
			case order <- b:
			case <-ctx.Done():
				return
			}
			if len(b.lines) < batchLines || b.err != nil {
				return
			}
		}
	}()
	defer func() {
		// Stop the reader, let the workers finish what they hold, and wait for both.
		cancel()
		for range order {
		}
		wg.Wait()
	}()

	for b := range order {
		select {
		case <-b.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if e := workErr.Load(); e != nil {
			return *e
		}
		for i := range b.results {
			r := &b.results[i]
			if r.err == nil {
				if prev, dup := firstSeen[r.id]; dup {
					r.err = &RecordError{File: path, Line: b.first[i], Path: "session_id", Msg: fmt.Sprintf("duplicate: %s is already the trajectory at %s", r.id, prev)}
				} else {
					firstSeen[r.id] = fmt.Sprintf("%s:%d", path, b.first[i])
				}
			}
			switch {
			case r.err == nil:
				if err := emit(r); err != nil {
					return err
				}
			case opt.KeepGoing:
				res.Skipped = append(res.Skipped, r.err)
			default:
				return r.err
			}
		}
		if b.err != nil {
			return b.err
		}
	}
	return ctx.Err()
}
