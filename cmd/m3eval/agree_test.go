package main

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/agree/agreetest"
)

var oracleCases = agreetest.Shared("oracle/cases")

// runAgree runs "m3eval agree args..." in-process and returns standard output and the error.
func runAgreeCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, _, err := runAgreeBoth(t, args...)
	return out, err
}

// TestAgreeEndToEnd builds the binary, runs it on an oracle case and compares every
// reference value of the case's oracle.json with the JSON it prints.
func TestAgreeEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "m3eval")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := filepath.Join(oracleCases, "c02_three_raters_20pct_missing")
	outFile := filepath.Join(t.TempDir(), "out.json")
	cmd := exec.Command(bin, "agree", "ratings.csv", "--auto", "auto.csv", "--schema", "schema.json",
		"--format", "json", "-o", outFile)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("m3eval agree: %v\n%s", err, out)
	}
	var ours, oracle map[string]any
	readJSON(t, outFile, &ours)
	readJSON(t, filepath.Join(dir, "oracle.json"), &oracle)
	n := 0
	for name, of := range oracle["fields"].(map[string]any) {
		gf := ours["fields"].(map[string]any)[name].(map[string]any)
		n += compareRefs(t, name, of.(map[string]any), gf)
	}
	if n < 50 {
		t.Fatalf("only %d reference values compared; the walk is broken", n)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
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

func TestAgreeErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	schema := write("schema.json", `{"fields":{"fluency":{"type":"ordinal","categories":[1,2,3,4,5]}}}`)
	for _, tc := range []struct {
		name, csv string
		args      []string
		want      string
		usage     bool
	}{
		{"outside categories", "item,rater,field,value\na,r1,fluency,3\n\"b\nc\",r1,fluency,7\n", []string{"--schema", schema},
			`ratings.csv:3: value: "7" is not a category of fluency (1..5)`, false},
		{"duplicate", "item,rater,field,value\na,r1,fluency,3\na,r2,fluency,3\na,r1,fluency,4\n", nil,
			`ratings.csv:4: item: duplicate rating of item "a" by r1 in field fluency (first on line 2)`, false},
		{"header", "item,who,field,value\n", nil, `ratings.csv:1: header: no column "rater"`, false},
		{"format", "item,rater,field,value\na,r1,fluency,3\n", []string{"--format", "xml"}, `--format "xml"`, true},
		{"levels without auto", "item,rater,field,value\na,r1,fluency,3\n", []string{"--levels", schema}, `--levels needs --auto`, true},
		{"negative bootstrap", "item,rater,field,value\na,r1,fluency,3\n", []string{"--bootstrap", "-1"}, `cannot be negative`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := write("ratings.csv", tc.csv)
			_, err := runAgreeCmd(t, append([]string{p}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			var ue *usageError
			if isUsage := errorsAs(err, &ue); isUsage != tc.usage {
				t.Fatalf("usage error = %v, want %v", isUsage, tc.usage)
			}
		})
	}
}

func errorsAs(err error, target **usageError) bool { return errors.As(err, target) }

// TestAgreeTableOutput checks the default format through the command: plain text when the
// output is not a terminal, undefined values as — with their footnote, n beside each value.
func TestAgreeTableOutput(t *testing.T) {
	dir := filepath.Join(oracleCases, "c05_constant_field")
	out, err := runAgreeCmd(t, filepath.Join(dir, "ratings.csv"), "--auto", filepath.Join(dir, "auto.csv"),
		"--schema", filepath.Join(dir, "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("color codes in output that is not a terminal")
	}
	if !regexp.MustCompile(`Gwet's AC1 +1\.00 +12 `).MatchString(out) {
		t.Errorf("no AC1 line with value and n:\n%s", out)
	}
	for _, want := range []string{"fluency (ordinal: 1..5) · 12 items · 3 raters", "Gwet's AC1",
		"—¹", "— undefined: expected disagreement is 0 (a single value among pairable values)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
