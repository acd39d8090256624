package longform_test

import (
	"github.com/m3bench/m3eval/internal/testkit"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Moved from cmd/m3eval/agree_test.go: the engine's checks; the command's wiring (a file
// argument, -o, exit codes) is in cmd/m3eval/testdata/script/agree.txtar.

// TestAgreeOracleCase runs agree on an oracle case and compares every reference value of the
// case's oracle.json with the JSON it writes.
func TestAgreeOracleCase(t *testing.T) {
	dir := filepath.Join(oracleCases, "c02_three_raters_20pct_missing")
	outFile := filepath.Join(t.TempDir(), "out.json")
	in := func(p string) string { return filepath.Join(dir, p) }
	if _, _, err := runAgree(t, in("ratings.csv"), "--auto", in("auto.csv"), "--schema", in("schema.json"),
		"--format", "json", "-o", outFile); err != nil {
		t.Fatalf("agree: %v", err)
	}
	var ours, oracle map[string]any
	testkit.ReadJSON(t, outFile, &ours)
	testkit.ReadJSON(t, filepath.Join(dir, "oracle.json"), &oracle)
	n := 0
	for name, of := range oracle["fields"].(map[string]any) {
		gf := ours["fields"].(map[string]any)[name].(map[string]any)
		n += compareRefs(t, name, of.(map[string]any), gf)
	}
	if n < 50 {
		t.Fatalf("only %d reference values compared; the walk is broken", n)
	}
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
			_, _, err := runAgree(t, append([]string{p}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			if got := isUsage(err); got != tc.usage {
				t.Fatalf("usage error = %v, want %v", got, tc.usage)
			}
		})
	}
}

// TestAgreeTableOutput checks the default format: plain text when the output is not a
// terminal, undefined values as — with their footnote, n beside each value.
func TestAgreeTableOutput(t *testing.T) {
	dir := filepath.Join(oracleCases, "c05_constant_field")
	out, _, err := runAgree(t, filepath.Join(dir, "ratings.csv"), "--auto", filepath.Join(dir, "auto.csv"),
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

// TestAgreeCSVForSpreadsheets (the agreement part of cmd/m3eval's TestCSVForSpreadsheets):
// the agreement CSV neutralizes field names from the ratings file (OWASP), and --excel starts
// it with a byte order mark.
func TestAgreeCSVForSpreadsheets(t *testing.T) {
	dir := t.TempDir()
	ratings := filepath.Join(dir, "ratings.csv")
	if err := os.WriteFile(ratings, []byte("item,rater,field,value\n1,a,=cmd(),1\n1,b,=cmd(),2\n2,a,=cmd(),2\n2,b,=cmd(),2\n3,a,=cmd(),3\n3,b,=cmd(),1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runAgree(t, ratings, "--format", "csv", "--excel")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "\ufefffield,") || !strings.Contains(out, "\n'=cmd(),") || strings.Contains(out, "\n=cmd(),") {
		t.Errorf("agree --format csv:\n%s", out)
	}
}
