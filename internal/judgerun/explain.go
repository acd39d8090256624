package judgerun

import (
	"fmt"
	"io"
	"strings"

	"github.com/m3bench/m3eval/internal/judge"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// WriteExplain prints a verdict: per field the value, the rule and the evidence, labelled in
// the turn's language; format "json" gives the same as JSON.
func WriteExplain(w io.Writer, v *judge.Verdict, rb *rubric.Rubric, rules *judge.Rules, format render.Format) error {
	if format == render.JSON {
		type fieldJSON struct {
			judge.Value
			Label       string `json:"label"`
			Explanation string `json:"explanation"`
		}
		out := struct {
			*judge.Verdict
			Rules  string      `json:"rules"`
			Fields []fieldJSON `json:"values"`
		}{Verdict: v, Rules: rules.Version}
		for _, x := range v.Values {
			fj := fieldJSON{Value: x, Label: x.Field, Explanation: judge.RuleText(x.Rule, v.Language)}
			if f, ok := rb.Field(x.Field); ok {
				fj.Label = label(f, v.Language)
			}
			if fj.Evidence == nil {
				fj.Evidence = []string{}
			}
			out.Fields = append(out.Fields, fj)
		}
		return render.WriteJSON(w, out)
	}
	head := [4]string{"field", "value", "rule", "evidence"}
	if v.Language == "zh" {
		head = [4]string{"字段", "分值", "规则", "证据"}
	}
	fmt.Fprintf(w, "%s  (%s, %s %d, %s, rules %s)\n", textsafe.Line(v.SampleID), textsafe.Line(v.ActionType), map[bool]string{true: "第", false: "turn"}[v.Language == "zh"], v.Turn, v.Language, rules.Version)
	rows := make([][]string, 0, len(v.Values))
	for _, x := range v.Values {
		name := x.Field
		if f, ok := rb.Field(x.Field); ok {
			name = label(f, v.Language)
		}
		val := x.Value
		if val == "" {
			val = "—"
		}
		ev := make([]string, len(x.Evidence))
		for i, e := range x.Evidence {
			ev[i] = "“" + e + "”"
		}
		rows = append(rows, []string{name, val, x.Rule + ": " + judge.RuleText(x.Rule, v.Language), strings.Join(ev, " ")})
	}
	return render.Columns(w, head[:], rows)
}

func label(f *rubric.Field, lang string) string {
	if lang == "zh" && f.LabelZh != "" {
		return f.LabelZh
	}
	if f.LabelEn != "" {
		return f.LabelEn
	}
	return f.Name
}
