package vistrajqa

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/m3bench/m3eval/internal/convert/domainav2"
)

// RunOptions is one conversion: input files, output directory and mode.
type RunOptions struct {
	Inputs []string
	Output string
	Options
	// KeepGoing skips bad records (reported in Result.Skipped) instead of failing the run.
	KeepGoing bool
	// Force replaces an existing, non-empty Output.
	Force bool
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

// Run converts the inputs into a new directory beside Output, validates it with
// domainav2.Validate and renames it to Output. Output is untouched unless all of that
// succeeds; the temporary directory is removed on failure. Memory holds one trajectory at a
// time plus the ids (for duplicates and the manifest).
func Run(ctx context.Context, opt RunOptions) (*Result, error) {
	if len(opt.Inputs) == 0 {
		return nil, errors.New("no input file")
	}
	out := filepath.Clean(opt.Output)
	replace, err := checkOutput(out, opt.Force)
	if err != nil {
		return nil, err
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
	if err := install(tmp, out, replace); err != nil {
		return nil, err
	}
	done = true
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

func createOut(dir, name string) (*outFile, error) {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	return &outFile{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// encode writes v as one line of JSON, preceded by sep.
func (o *outFile) encode(sep string, v any) error {
	if _, err := o.w.WriteString(sep); err != nil {
		return err
	}
	// jsonv2 leaves <, > and & as they are (captions hold them), like Python's json.dump.
	return jsonv2.MarshalWrite(o.w, v)
}

func (o *outFile) close() error {
	err := o.w.Flush()
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	return err
}

func write(ctx context.Context, dir string, opt RunOptions, res *Result) (err error) {
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
	for _, in := range opt.Inputs {
		name := SourceName(in)
		si, ok := sourceIdx[name]
		if !ok {
			si = len(man.Sources)
			sourceIdx[name] = si
			man.Sources = append(man.Sources, domainav2.ManifestSource{Name: name, SampleIDs: []string{}})
		}
		man.Sources[si].Files = append(man.Sources[si].Files, filepath.Base(in))
		err := convertFile(ctx, in, opt, res, firstSeen, func(t *Trajectory) error {
			sample, mem, qa := Convert(t, opt.Options)
			if err := mainF.encode(sep, sample); err != nil {
				return err
			}
			sep = ",\n"
			if err := memF.encode("", mem); err != nil {
				return err
			}
			if err := memF.w.WriteByte('\n'); err != nil {
				return err
			}
			if err := qaF.encode("", qa); err != nil {
				return err
			}
			if err := qaF.w.WriteByte('\n'); err != nil {
				return err
			}
			man.Sources[si].SampleIDs = append(man.Sources[si].SampleIDs, t.SessionID)
			res.Converted++
			return nil
		})
		if err != nil {
			return err
		}
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
	return os.WriteFile(filepath.Join(dir, domainav2.ManifestFile), append(b, '\n'), 0o644)
}

// convertFile reads one input and hands each good trajectory to emit.
func convertFile(ctx context.Context, path string, opt RunOptions, res *Result, firstSeen map[string]string, emit func(*Trajectory) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rd := NewReader(f, path)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		t, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		var re *RecordError
		if err == nil {
			at := fmt.Sprintf("%s:%d", path, rd.Line())
			if prev, dup := firstSeen[t.SessionID]; dup {
				err = &RecordError{File: path, Line: rd.Line(), Path: "session_id", Msg: fmt.Sprintf("duplicate: %s is already the trajectory at %s", t.SessionID, prev)}
			} else {
				firstSeen[t.SessionID] = at
			}
		}
		switch {
		case err == nil:
			if err := emit(t); err != nil {
				return err
			}
		case errors.As(err, &re) && opt.KeepGoing:
			res.Skipped = append(res.Skipped, re)
		default:
			return err
		}
	}
}
