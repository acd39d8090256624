package illusion

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/m3bench/m3eval/internal/outfile"
	"github.com/m3bench/m3eval/internal/progress"
)

// SplitInput names one split and the files holding it: one file, or the shards of a
// split in order.
type SplitInput struct {
	Name  string // e.g. Illusion_ICON
	Paths []string
}

// SplitResult is what BuildTestSets did with one split.
type SplitResult struct {
	Split      string
	Inputs     []string
	Format     Format
	Selection  Selection
	OutputFile string // base name inside the output directory
}

// SummaryFile is the name of the summary written next to the test sets.
const SummaryFile = "summary.json"

// BuildTestSets samples n rows of every split with one random.Random(seed) shared by the
// splits in the order given, writes each selection in its input's format to outDir under
// OutputName, and writes summary.json. Every split's names are read and drawn from first,
// then the selected rows copied: each file is read twice, and memory holds the selected
// indices, not the rows.
func BuildTestSets(ctx context.Context, inputs []SplitInput, n int, seed int64, outDir string) ([]SplitResult, error) {
	return buildTestSets(ctx, inputs, n, seed, outDir, nil)
}

// buildTestSets is BuildTestSets telling report its progress: the bytes of the split files
// done, each counted once for reading the names and once for copying the rows.
func buildTestSets(ctx context.Context, inputs []SplitInput, n int, seed int64, outDir string, report progress.Func) ([]SplitResult, error) {
	if len(inputs) == 0 {
		return nil, errors.New("no splits given")
	}
	seen := map[string]bool{}
	for _, in := range inputs {
		out := OutputName(in.Name, n, FormatParquet)
		if seen[out] {
			return nil, fmt.Errorf("split %s given twice", in.Name)
		}
		seen[out] = true
	}
	sampler, err := NewSampler(seed, n)
	if err != nil {
		return nil, err
	}
	splitBytes := make([]int64, len(inputs))
	var done, total int64
	for i, in := range inputs {
		for _, p := range in.Paths {
			if fi, err := os.Stat(p); err == nil {
				splitBytes[i] += fi.Size()
			}
		}
		total += 2 * splitBytes[i]
	}
	report.Report(0, total)
	// Every split is read and drawn from before anything is written: a split that cannot be
	// read (a missing file, a broken line) then leaves no --out directory and no test set
	// of an earlier split without its summary. The draws are the same, made in the same
	// order from the one sampler; only the row indices are kept, not the names.
	results := make([]SplitResult, 0, len(inputs))
	for i, in := range inputs {
		if len(in.Paths) == 0 {
			return nil, fmt.Errorf("split %s: no files", in.Name)
		}
		format, err := DetectFormat(in.Paths[0])
		if err != nil {
			return nil, fmt.Errorf("split %s: %w", in.Name, err)
		}
		for _, p := range in.Paths[1:] {
			if f, err := DetectFormat(p); err != nil || f != format {
				return nil, fmt.Errorf("split %s: %s is not %s like %s (%v)", in.Name, p, format, in.Paths[0], err)
			}
		}
		names, err := ReadNames(ctx, in.Paths, format)
		if err != nil {
			return nil, fmt.Errorf("split %s: %w", in.Name, err)
		}
		done += splitBytes[i]
		report.Report(done, total)
		results = append(results, SplitResult{Split: in.Name, Inputs: in.Paths, Format: format,
			Selection: sampler.Select(names), OutputFile: OutputName(in.Name, n, format)})
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, err
	}
	for i, res := range results {
		if err := CopyRows(ctx, res.Inputs, filepath.Join(outDir, res.OutputFile), res.Format, res.Selection.Indices); err != nil {
			return nil, fmt.Errorf("split %s: %w", res.Split, err)
		}
		done += splitBytes[i]
		report.Report(done, total)
	}
	data, err := SummaryJSON(results)
	if err != nil {
		return nil, err
	}
	if err := outfile.WriteFile(filepath.Join(outDir, SummaryFile), data, 0); err != nil {
		return nil, err
	}
	return results, nil
}

// ordered is a JSON object that keeps its keys in insertion order, as Python's dict and
// json.dump do; encoding/json would sort map keys.
type ordered []kv

type kv struct {
	Key   string
	Value any
}

// MarshalJSON implements json.Marshaler.
func (o ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(e.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(e.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// SummaryJSON renders summary.json in the layout of the guide's script (json.dump with
// indent=2, splits and groups in order). sampled_counts holds the rows really drawn, which
// differ from the script's (it writes the allocation there) only for groups smaller than
// their allocation; allocated_counts holds the allocation.
func SummaryJSON(results []SplitResult) ([]byte, error) {
	var doc ordered
	for _, r := range results {
		var orig, sampled, alloc ordered
		total := 0
		for _, g := range r.Selection.Groups {
			orig = append(orig, kv{string(g.Difficulty), g.Original})
			sampled = append(sampled, kv{string(g.Difficulty), g.Sampled})
			alloc = append(alloc, kv{string(g.Difficulty), g.Allocated})
			total += g.Sampled
		}
		doc = append(doc, kv{r.Split, ordered{
			{"original_counts", orig},
			{"sampled_counts", sampled},
			{"total_sampled", total},
			{"output_file", r.OutputFile},
			{"allocated_counts", alloc},
		}})
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
