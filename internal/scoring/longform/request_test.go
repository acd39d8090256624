package longform_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/agree/agreetest"
	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/scoring/longform"
	"github.com/m3bench/m3eval/internal/testkit"
)

// These helpers run m3eval agree's engine the way the command does (its flags, longform.Run,
// the statistics writer), without the command: the checks of the statistics live here, beside
// the code they check, and cmd/m3eval keeps only the wiring (testdata/script/agree.txtar).

var (
	oracleCases = agreetest.OracleCases()
	sharedData  = filepath.Join("testdata", "realdata")
)

// realdataRefs holds the references computed on the real data sets (SciPy, the oracle).
const realdataRefs = "../../agree/testdata/realdata"

// The shared helpers, written once in internal/testkit.
var (
	errFlag = testkit.ErrFlag
	isUsage = testkit.IsUsage
)

// runAgree runs m3eval agree through the command's own path: args (the ratings file first
// or anywhere, -o FILE) parsed into a longform.Request, as cobra does, then its Run, and the
// report written to -o or standard output by outfile.Write, the writer under the command's
// -o. It returns standard output (or "" with -o), the warnings, and the error.
func runAgree(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var q longform.Request
	fs := pflag.NewFlagSet("agree", pflag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	q.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return "", "", fmt.Errorf("%w: %v", errFlag, err)
	}
	if fs.NArg() != 1 {
		t.Fatalf("agree %v: %d arguments", args, fs.NArg())
	}
	q.Input.Files.Ratings = fs.Arg(0)
	var out, warn bytes.Buffer
	err := q.Run(context.Background(), &cmdio.IO{Out: &out, Err: &warn})
	return out.String(), warn.String(), err
}

// compareRefs walks an oracle object and checks each {"reference": ...} against ours.
func compareRefs(t *testing.T, path string, o, g map[string]any) int {
	n := 0
	for k, ov := range o {
		if k == "bootstrap" || k == "by_library" || k == "fleiss_kappa_generalized_missing_info" {
			continue
		}
		switch x := ov.(type) {
		case map[string]any:
			if ref, ok := x["reference"]; ok {
				n++
				gv := g[k]
				if ref == nil {
					if gv != nil {
						t.Errorf("%s.%s: oracle undefined, we %v", path, k, gv)
					}
					continue
				}
				f, ok := gv.(float64)
				if !ok || math.Abs(f-ref.(float64)) > 1e-9 {
					t.Errorf("%s.%s: oracle %v, we %v", path, k, ref, gv)
				}
				continue
			}
			if sub, ok := g[k].(map[string]any); ok {
				n += compareRefs(t, path+"."+k, x, sub)
			} else {
				t.Errorf("%s.%s: missing", path, k)
			}
		case []any:
			gl, _ := g[k].([]any)
			for i, e := range x {
				if eo, ok := e.(map[string]any); ok && i < len(gl) {
					n += compareRefs(t, path+"."+k, eo, gl[i].(map[string]any))
				}
			}
		}
	}
	return n
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("real data: %v", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

func writeRows(t *testing.T, path string, rows [][]string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// TestRequestRunUsage: the checks Run makes before reading a file are usage errors (exit 2):
// standard input named twice, flags that need another; nothing is written.
func TestRequestRunUsage(t *testing.T) {
	for _, q := range []longform.Request{
		{Input: longform.RunOptions{Files: longform.Options{Ratings: "-", Auto: "-"}}},
		{Input: longform.RunOptions{Files: longform.Options{Ratings: "r.csv"}, Levels: "levels.csv"}},
		{Input: longform.RunOptions{Files: longform.Options{Ratings: "r.csv", Auto: "a.csv"}, Levels: "l.csv", Clusters: "c.csv", ClusterColumn: "system"}},
	} {
		var out, warn bytes.Buffer
		err := q.Run(context.Background(), &cmdio.IO{Out: &out, Err: &warn})
		if !isUsage(err) || out.Len() != 0 || warn.Len() != 0 {
			t.Errorf("%+v: err %v (usage %v), wrote %q, said %q", q.Input, err, isUsage(err), out.String(), warn.String())
		}
	}
}
