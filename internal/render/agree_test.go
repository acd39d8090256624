package render

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/agree"
)

// results analyses a small field where everybody gives 4 (so most coefficients are
// undefined) and one with real variation.
func results(t *testing.T) []agree.FieldResult {
	t.Helper()
	mk := func(name string, rows [][]uint8) agree.FieldData {
		f := agree.NewOrdinal(name, 1, 2, 3, 4, 5)
		m := agree.NewMatrix(len(rows), 2)
		for i, r := range rows {
			m.Set(i, 0, r[0])
			m.Set(i, 1, r[1])
		}
		return agree.FieldData{Field: f, Items: make([]string, len(rows)), Raters: []string{"a", "b"}, Ratings: m}
	}
	d := []agree.FieldData{
		mk("constant", [][]uint8{{3, 3}, {3, 3}, {3, 3}}),
		mk("varied", [][]uint8{{0, 0}, {1, 2}, {4, 4}, {2, 2}, {3, 1}}),
	}
	res, err := agree.Analyze(context.Background(), d, agree.Options{Bootstrap: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestTableNoColor(t *testing.T) {
	var b bytes.Buffer
	if err := WriteAgreement(&b, results(t), AgreementOptions{Format: Table, Bootstrap: 50}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "\x1b[") {
		t.Fatal("escape codes without color")
	}
	for _, want := range []string{"Fleiss' κ (complete items)", "—¹", "² — undefined: expected agreement is 1", "Landis & Koch", " [", "a – b: Cohen's κ"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	WriteAgreement(&b, results(t), AgreementOptions{Format: Table, Color: true})
	if !strings.Contains(b.String(), "\x1b[") {
		t.Error("no escape codes with color")
	}
}

func TestJSONUndefinedReasonsBeside(t *testing.T) {
	var b bytes.Buffer
	if err := WriteAgreement(&b, results(t), AgreementOptions{Format: JSON}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Fields map[string]map[string]json.RawMessage `json:"fields"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	c := doc.Fields["constant"]
	var reasons map[string]string
	if err := json.Unmarshal(c["undefined_reason"], &reasons); err != nil {
		t.Fatalf("undefined_reason %s: %v", c["undefined_reason"], err)
	}
	if string(c["fleiss_kappa"]) != "null" || !strings.HasPrefix(reasons["fleiss_kappa"], "expected agreement is 1") {
		t.Fatalf("constant field: fleiss %s, reasons %s", c["fleiss_kappa"], c["undefined_reason"])
	}
	var ka map[string]any
	if err := json.Unmarshal(c["krippendorff_alpha"], &ka); err != nil {
		t.Fatalf("krippendorff_alpha %s: %v", c["krippendorff_alpha"], err)
	}
	if ka["ordinal"] != nil || ka["undefined_reason"].(map[string]any)["ordinal"] == "" {
		t.Fatalf("alpha block %v", ka)
	}
	if _, ok := doc.Fields["varied"]["undefined_reason"]; ok {
		t.Fatalf("varied field has undefined values: %s", doc.Fields["varied"]["undefined_reason"])
	}
}

func TestMarkdownAndCSV(t *testing.T) {
	var b bytes.Buffer
	WriteAgreement(&b, results(t), AgreementOptions{Format: Markdown})
	md := b.String()
	if !strings.Contains(md, "| Statistic | Value | p | n |") || !strings.Contains(md, "—<sup>1</sup>") || !strings.Contains(md, "<sup>1</sup> Undefined:") {
		t.Fatalf("markdown:\n%s", md)
	}
	b.Reset()
	WriteAgreement(&b, results(t), AgreementOptions{Format: CSV})
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range recs[1:] {
		if r[0] == "varied" && r[3] == "krippendorff_alpha.ordinal" {
			found = r[4] != "" && r[6] != "" && r[9] == ""
		}
		if r[0] == "constant" && r[3] == "fleiss_kappa" && (r[4] != "" || r[9] == "") {
			t.Fatalf("undefined row %v", r)
		}
	}
	if !found {
		t.Fatal("no defined alpha row with an interval in the CSV")
	}
}

// TestMatrixAndLatexNeutralizeEscapes: judge and field names come from data; the matrix and
// LaTeX writers must not pass their escape sequences on.
func TestMatrixAndLatexNeutralizeEscapes(t *testing.T) {
	f := agree.NewOrdinal("q\x1b[2J", 1, 2, 3, 4, 5)
	m := agree.NewMatrix(6, 2)
	j := agree.NewJudge("evil\x1b[31m", 6)
	for i := 0; i < 6; i++ {
		m.Set(i, 0, uint8(i%5))
		m.Set(i, 1, uint8((i+1)%5))
		j.Present[i], j.Num[i], j.Code[i] = true, float64(i), uint8(i%5)
	}
	d := []agree.FieldData{{Field: f, Items: []string{"a", "b", "c", "d", "e", "f"}, Raters: []string{"r1", "r2"}, Ratings: m, Judges: []agree.Judge{j}}}
	res, err := agree.Analyze(context.Background(), d, agree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []AgreementOptions{{Format: Table, Matrix: "pearson"}, {Format: LaTeX, Matrix: "pearson"}, {Format: LaTeX}, {Format: Markdown, Matrix: "kendall_tau_b"}} {
		var b bytes.Buffer
		if err := WriteAgreement(&b, res, o); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "\x1b") {
			t.Errorf("%s (matrix %q) passes an escape sequence:\n%q", o.Format, o.Matrix, b.String())
		}
		if !strings.Contains(b.String(), "evil") && o.Matrix != "" {
			t.Errorf("%s matrix lacks the judge:\n%s", o.Format, b.String())
		}
	}
}

// TestHeaderCountsSingular: a field's header says "1 item", not "1 items" (a group of
// m3eval score --by may hold one turn).
func TestHeaderCountsSingular(t *testing.T) {
	r := agree.FieldResult{Field: agree.Field{Name: "q", Type: agree.Continuous}, NItems: 1, Raters: []string{"a", "b"}, NRatings: 2, NMissingCells: 1}
	if got, want := header(r), "q (continuous) · 1 item · 2 raters · 2 ratings · 1 missing cell"; got != want {
		t.Errorf("header = %q, want %q", got, want)
	}
}
