package rubric

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckCommand: m3eval rubric check's Run summarizes the guide's rubric, from a file or
// standard input, and names the line and field of a broken one.
func TestCheckCommand(t *testing.T) {
	const guide = "../../annotations/rubric.json"
	data, err := os.ReadFile(guide)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	fields := `  correctness              scale 1–5, required
  reasoning_completeness   scale 1–5, required
  resists_misleading       choice Yes/No/NA, required, 1 NA rules
  context_consistency      choice Yes/No/NA, required, 1 NA rules
  overall_quality          scale 1–5, required
  comments                 text, optional
`
	for _, tc := range []struct{ file, name string }{{guide, guide}, {"-", "-"}} {
		var out bytes.Buffer
		if err := (CheckCommand{File: tc.file}).Run(bytes.NewReader(data), &out); err != nil {
			t.Fatal(err)
		}
		want := tc.name + ": rubric m3bench-human-eval, 6 fields, version " + r.Version + "\n" + fields
		if out.String() != want {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.file, out.String(), want)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte("{\"name\": \"x\",\n \"fields\": [{\"name\": 3}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = CheckCommand{File: bad}.Run(nil, &out)
	if err == nil || !strings.Contains(err.Error(), "line 2: fields.name") || out.Len() > 0 {
		t.Errorf("a broken rubric: %v, wrote %q", err, out.String())
	}
}
