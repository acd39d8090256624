package render_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/illusion"
	"github.com/m3bench/m3eval/internal/render"
)

// TestIllusionReportFormats: an undefined recall is null in JSON and a dash in the tables; empty
// lists are [] (not null); a "|" in data cannot break a Markdown table; notes and warnings
// reach the terminal escaped.
func TestIllusionReportFormats(t *testing.T) {
	rep := &illusion.Report{
		Rows: []illusion.Row{{Split: "Illusion_ICON", Kind: illusion.KindShape, Group: "all", Stat: illusion.NewStat(3, 4)},
			{Split: "Illusion_ICON", Kind: illusion.KindShape, Group: "Hard", Stat: illusion.NewStat(0, 0)}},
		Confusions: []illusion.Confusion{{Split: "Illusion_ICON", Kind: illusion.KindShape, Truth: "animal", Answer: "cat | dog", Count: 2}},
		Warnings:   []string{"log\x1b[31m: red"},
		Rule:       illusion.RuleM3eval,
	}
	var b bytes.Buffer
	if err := render.WriteIllusion(&b, rep, render.JSON, false); err != nil {
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
	if err := render.WriteIllusion(&b, rep, render.Markdown, false); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"### Illusion\\_ICON — shape recall", "| **all** | 4 | 3 | 75.0 |", "| Hard | 0 | 0 | — | [—, —] |", `| cat \| dog | 2 |`} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}

	b.Reset()
	rep.By = illusion.KindScene
	if err := render.WriteIllusion(&b, rep, render.Table, false); err != nil {
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

// TestIllusionFormatsAreRenderFormats: illusion score's --format values (kept in package
// illusion, which render imports) are the formats WriteIllusion writes, in render's names.
func TestIllusionFormatsAreRenderFormats(t *testing.T) {
	rep := &illusion.Report{Rows: []illusion.Row{{Split: "S", Kind: illusion.KindShape, Group: "all", Stat: illusion.NewStat(1, 2)}}}
	want := map[render.Format]string{render.Table: "S — shape recall", render.JSON: `"rows"`, render.Markdown: "### S — shape recall"}
	if len(illusion.Formats) != len(want) {
		t.Fatalf("illusion.Formats %v, want the %d of WriteIllusion", illusion.Formats, len(want))
	}
	for _, f := range illusion.Formats {
		var b bytes.Buffer
		if err := render.WriteIllusion(&b, rep, render.Format(f), false); err != nil {
			t.Fatal(err)
		}
		if w, ok := want[render.Format(f)]; !ok || !strings.Contains(b.String(), w) || (f == "table" && strings.Contains(b.String(), "###")) {
			t.Errorf("--format %s wrote:\n%s", f, b.String())
		}
	}
}
