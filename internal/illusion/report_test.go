package illusion

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/usage"
)

// TestReportFormats: an undefined recall is null in JSON and a dash in the tables; empty
// lists are [] (not null); a "|" in data cannot break a Markdown table; notes and warnings
// reach the terminal escaped.
func TestReportFormats(t *testing.T) {
	rep := &Report{
		Rows: []Row{{Split: "Illusion_ICON", Kind: KindShape, Group: "all", Stat: NewStat(3, 4)},
			{Split: "Illusion_ICON", Kind: KindShape, Group: "Hard", Stat: NewStat(0, 0)}},
		Confusions: []Confusion{{Split: "Illusion_ICON", Kind: KindShape, Truth: "animal", Answer: "cat | dog", Count: 2}},
		Warnings:   []string{"log\x1b[31m: red"},
		Rule:       RuleM3eval,
	}
	var b bytes.Buffer
	rep.Format = ReportJSON
	if err := rep.Write(&b, false); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	rows := doc["rows"].([]any)
	if r := rows[1].(map[string]any); r["recall"] != nil || r["ci_low"] != nil {
		t.Errorf("undefined recall: %v", r)
	}
	if r := rows[0].(map[string]any); r["recall"] != 0.75 {
		t.Errorf("recall %v", r["recall"])
	}
	if doc["by"] != "difficulty" || !strings.Contains(b.String(), `"notes": []`) || !strings.Contains(b.String(), `"logs": []`) {
		t.Errorf("json:\n%s", b.String())
	}

	b.Reset()
	rep.Format = ReportMarkdown
	if err := rep.Write(&b, false); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"### Illusion_ICON — shape recall", "| **all** | 4 | 3 | 75.0 |", "| Hard | 0 | 0 | — | [—, —] |", `| cat \| dog | 2 |`} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}

	b.Reset()
	rep.Format, rep.By = ReportTable, KindScene
	if err := rep.Write(&b, false); err != nil {
		t.Fatal(err)
	}
	if tab := b.String(); !strings.Contains(tab, "scene class") || strings.Contains(tab, "\x1b") || !strings.Contains(tab, "Most frequent wrong answers") {
		t.Errorf("table:\n%s", tab)
	}

	b.Reset()
	rep.WriteNotes(&b)
	if b.String() != "warning: log␛[31m: red\n" {
		t.Errorf("notes %q", b.String())
	}
}

// TestFlagChecks: every bad flag value is a usage error, checked before any file is read
// (an enumerated flag's when it is parsed).
func TestFlagChecks(t *testing.T) {
	for _, args := range [][]string{{"--kind", "both"}, {"--by", "colour"}, {"--format", "csv"}, {"--rule", "strict"}} {
		fs := pflag.NewFlagSet("illusion score", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		(&ScoreFlags{}).AddFlags(fs)
		var ve *cmdutil.ValueError
		if err := fs.Parse(args); !errors.As(err, &ve) || ve.Flag != args[0][2:] {
			t.Errorf("%q: %v", args, err)
		}
	}
	good := ScoreFlags{Format: "table", Rule: "m3eval"}
	for _, f := range []ScoreFlags{
		{Format: "md", Top: -1, Rule: "m3eval"},
		{Format: "json", Rule: "m3eval", Pool: true, Latest: true},
		{Format: "json", Rule: "m3eval", Testsets: []string{"nofile"}},
	} {
		if _, err := ScoreReport(context.Background(), f, []string{"missing.jsonl"}); !errors.Is(err, usage.Err) {
			t.Errorf("%+v: %v is not a usage error", f, err)
		}
	}
	if _, err := ScoreReport(context.Background(), good, []string{"missing.jsonl"}); err == nil || errors.Is(err, usage.Err) {
		t.Errorf("a missing log: %v", err)
	}
	for _, f := range []SampleFlags{{Out: "x"}, {Splits: []string{"A=a.jsonl"}}, {Splits: []string{"A=a.jsonl"}, Out: "x", N: -1}, {Splits: []string{"A"}, Out: "x"}, {Splits: []string{"A=a,,b"}, Out: "x"}} {
		if _, err := Sample(context.Background(), f); !errors.Is(err, usage.Err) {
			t.Errorf("%+v: %v is not a usage error", f, err)
		}
	}
}
