package textsafe

import (
	"bytes"
	"testing"
)

// TestWritersWholeRunes: the writers see every rune whole, however the text is cut into
// writes; JSON gets \u escapes, a terminal the visible stand-ins.
func TestWritersWholeRunes(t *testing.T) {
	in := "a\x1b]0;t\x07 \u009b2J \u202eexe 下雨 \x7f"
	for _, tc := range []struct {
		name string
		new  func(*bytes.Buffer) *Writer
		want string
	}{
		{"terminal", func(b *bytes.Buffer) *Writer { return NewWriter(b) }, "a␛]0;t␇ ␛[2J <U+202E>exe 下雨 ␡"},
		{"json", func(b *bytes.Buffer) *Writer { return NewJSONWriter(b) }, "a\x1b]0;t\x07 \\u009b2J \\u202eexe 下雨 \\u007f"},
	} {
		for step := 1; step <= len(in); step++ {
			var b bytes.Buffer
			w := tc.new(&b)
			for i := 0; i < len(in); i += step {
				if _, err := w.Write([]byte(in[i:min(len(in), i+step)])); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Fatalf("%s, writes of %d bytes: %q, want %q", tc.name, step, b.String(), tc.want)
			}
		}
	}
	if got := Line("file \u202egnp.exe"); got != "file <U+202E>gnp.exe" {
		t.Errorf("Line = %q", got)
	}
}
