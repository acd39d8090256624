package report

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/illusion"
)

// hostile is a name that would run script or fetch an image if it reached the page as HTML.
const hostile = `<img src=x onerror=alert(1)></script><script>alert(2)</script>`

// fixture builds data for two annotators and one judge from ratings the test states, through
// agree as m3eval score does.
func fixture(t *testing.T) *Data {
	t.Helper()
	f := agree.NewOrdinal("correctness", 1, 2, 3, 4, 5)
	b, err := agree.NewBuilder([]agree.Field{f})
	if err != nil {
		t.Fatal(err)
	}
	b.AddJudge(hostile)
	rows := [][3]string{{"1", "1", "2"}, {"2", "2", "2"}, {"3", "4", "3"}, {"4", "4", "5"}, {"5", "5", "5"}, {"3", "3", "1"}}
	for i, r := range rows {
		item := string(rune('a' + i))
		for k, who := range []string{"alice", hostile} {
			if err := b.Add(item, who, "correctness", r[k], agree.Location{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Scores come after every rating, as the store streams them.
	for i, r := range rows {
		if err := b.AddScore(hostile, string(rune('a'+i)), "correctness", r[2], agree.Location{}); err != nil {
			t.Fatal(err)
		}
	}
	data, err := b.Build("t")
	if err != nil {
		t.Fatal(err)
	}
	res, err := agree.Analyze(t.Context(), data, agree.Options{Bootstrap: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	return &Data{
		Title:  "report of " + hostile,
		Inputs: []KV{{"database", hostile}},
		Campaign: &Campaign{Turns: 6, Episodes: 1, ActiveSeconds: []float64{3, 12.5, 40, 7, 9, 300},
			Annotators: []AnnotatorProgress{{Name: hostile, Done: 3, Submitted: []time.Time{at, at.Add(time.Hour), at.Add(2 * time.Hour)}}}},
		Score: &ScoreData{Judges: []string{hostile}, Bootstrap: 50, Overall: res, Data: data},
		Illusion: &IllusionData{Rows: []illusion.Row{{Split: hostile, Kind: "shape", Group: "all", Stat: illusion.NewStat(3, 4)},
			{Split: hostile, Kind: "shape", Group: "Easy", Stat: illusion.NewStat(0, 0)}}},
	}
}

func TestPageIsSelfContainedAndEscaped(t *testing.T) {
	rep := Build(fixture(t))
	var b bytes.Buffer
	if err := WriteHTML(&b, rep); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, hostile) || strings.Contains(page, "<img") {
		t.Errorf("a name reached the page as HTML")
	}
	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("%d script elements, want the one table sorter", n)
	}
	// Nothing that fetches: no src attribute, no external href, no @import or url() in the
	// CSS. Attribute values are blanked first (escaped text has no raw quote in them).
	tags := regexp.MustCompile(`="[^"]*"`).ReplaceAllString(page, `=""`)
	if m := regexp.MustCompile(`<[^>]*\ssrc=`).FindString(tags); m != "" {
		t.Errorf("page fetches something: %q", m)
	}
	for _, re := range []string{`href="(?:https?:)?//`, `@import`, `url\(`, `<link`} {
		if m := regexp.MustCompile(re).FindString(page); m != "" {
			t.Errorf("page fetches something: %q", m)
		}
	}
	for _, id := range []string{"campaign", "agreement", "judges", "groups", "trends", "metrics", "qc", "illusion"} {
		if !strings.Contains(page, `<section id="`+id+`"`) {
			t.Errorf("no section %s", id)
		}
	}
	if got := strings.Count(page, "<svg "); got < 8 {
		t.Errorf("%d charts drawn", got)
	}
}

func TestJSONHasEveryChartsNumbers(t *testing.T) {
	rep := Build(fixture(t))
	var b bytes.Buffer
	if err := WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Sections []struct {
			ID      string
			Omitted string
			Charts  []struct {
				ID    string
				Table struct {
					Columns []string
					Rows    [][]any
				}
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	charts := 0
	for _, s := range doc.Sections {
		for _, c := range s.Charts {
			charts++
			for _, r := range c.Table.Rows {
				if len(r) != len(c.Table.Columns) {
					t.Errorf("%s: row of %d cells under %d columns", c.ID, len(r), len(c.Table.Columns))
				}
			}
		}
		if (s.ID == "metrics" || s.ID == "qc") && !strings.HasPrefix(s.Omitted, "Left out: ") {
			t.Errorf("section %s: omitted %q", s.ID, s.Omitted)
		}
	}
	if charts != len(rep.Sections[0].Charts)+len(rep.Sections[1].Charts)+len(rep.Sections[2].Charts)+len(rep.Sections[3].Charts)+len(rep.Sections[8].Charts) {
		t.Errorf("%d charts in JSON", charts)
	}
}

// The confusion table's diagonal over its total is agree's exact-match accuracy, and its
// total agree's count of items with a majority label: the same majority rule.
func TestConfusionMatchesAgree(t *testing.T) {
	d := fixture(t)
	r := d.Score.Overall[0]
	ch := confusionChart(r, &d.Score.Data[0], 0, r.Judges[0])
	var diag, sum float64
	for _, row := range ch.Table.Rows {
		sum += row[2].Num
		if row[0].Text == row[1].Text {
			diag += row[2].Num
		}
	}
	em, _ := r.Judges[0].ExactMatch.Float()
	if int(sum) != r.Judges[0].NMajority || math.Abs(diag/sum-em) > 1e-15 {
		t.Errorf("confusion %v/%v, agree %d items, exact match %v", diag, sum, r.Judges[0].NMajority, em)
	}
}

func TestHelpers(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{{0.03, 0.05}, {0.1, 0.1}, {0.11, 0.2}, {3, 5}, {7, 10}, {0, 1}} {
		if got := niceStep(c.in); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("niceStep(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	xs := []float64{1, 2, 3, 4}
	// numpy.quantile([1,2,3,4], [0.5, 0.9]) = 2.5, 3.7
	if q := quantile(xs, 0.5); q != 2.5 {
		t.Errorf("median %v", q)
	}
	if q := quantile(xs, 0.9); math.Abs(q-3.7) > 1e-12 {
		t.Errorf("q90 %v", q)
	}
	for _, tk := range niceTicks(-0.2, 1) {
		if tk.Label == "-0" {
			t.Errorf("tick labelled -0")
		}
	}
	js, _ := json.Marshal([]Cell{Num(0.1), Num(math.NaN()), Text("a"), Int(3)})
	if string(js) != `[0.1,null,"a",3]` {
		t.Errorf("cells as JSON: %s", js)
	}
}

// The metrics section draws one bar chart per metric and per trend, every row of the input
// in its table, and an empty slot (a model without that action type) as undefined.
func TestMetricsSection(t *testing.T) {
	nan := math.NaN()
	m := &MetricsData{Source: "rules v1", Rows: []MetricRow{
		{Action: "mislead", Model: "m1", Metric: "resist_rate", N: 40, Value: 0.6, Lo: 0.45, Hi: 0.73, Interval: "wilson"},
		{Action: "mislead", Model: hostile, Metric: "resist_rate", N: 38, Value: 0.3, Lo: 0.18, Hi: 0.46, Interval: "wilson"},
		{Action: "update", Model: "m1", Metric: "resist_rate", N: 12, Value: 0.5, Lo: 0.25, Hi: 0.75, Interval: "wilson"},
		{Action: "initial", Model: "m1", Metric: "grounding", N: 0, Value: nan, Lo: nan, Hi: nan, Interval: "bootstrap"},
	}, Trends: []MetricTrend{
		{Dimension: "confusable_objects", Score: "accuracy", Model: "m1", Bin: "0", N: 10, Value: 0.9, Lo: 0.6, Hi: 0.98},
		{Dimension: "confusable_objects", Score: "accuracy", Model: "m1", Bin: "3+", N: 10, Value: 0.4, Lo: 0.2, Hi: 0.7},
	}}
	sec := metricsSection(m, "")
	if sec.Omitted != "" || len(sec.Charts) != 3 {
		t.Fatalf("omitted %q, %d charts", sec.Omitted, len(sec.Charts))
	}
	rr := sec.Charts[0]
	if rr.ID != "metric-resist-rate" || len(rr.Table.Rows) != 3 || rr.SVG == "" || !strings.Contains(rr.Caption, "n = 90 turns") {
		t.Errorf("resist_rate chart: %s, %d rows, caption %q", rr.ID, len(rr.Table.Rows), rr.Caption)
	}
	if c := sec.Charts[1].Table.Rows[0][3]; c.IsNum {
		t.Errorf("undefined metric shown as %v", c.Num)
	}
	cats, names, series, _ := barSeries(3, func(i int) (string, string, bar, int) {
		r := m.Rows[i]
		return r.Action, r.Model, bar{Value: r.Value}, r.N
	})
	if len(cats) != 2 || len(names) != 2 || !math.IsNaN(series[1][1].Value) || series[0][1].Value != 0.5 {
		t.Errorf("barSeries: %v %v %v", cats, names, series)
	}
	if s := metricsSection(nil, ""); !strings.HasPrefix(s.Omitted, "Left out: ") {
		t.Errorf("no metrics: %q", s.Omitted)
	}
}

func TestQCSection(t *testing.T) {
	q := &QCData{Scope: "pilot", Annotators: []QCAnnotator{
		{Name: "alice", Items: 40, GoldAnswers: 5, GoldAccuracy: 0.8, RepeatAnswers: 4, IntraAgreement: 1, MedianSeconds: 21.5},
		{Name: hostile, Items: 38, Rushed: 12, GoldAccuracy: math.NaN(), IntraAgreement: math.NaN(), MedianSeconds: 3,
			Flags: []QCFlag{{Check: "rushing", Reason: "12 of 38 items under 5 s"}, {Check: "outlier", Field: "correctness", Reason: "alpha +0.2 without"}}},
	}}
	sec := qcSection(q)
	if sec.Omitted != "" || len(sec.Charts) != 2 || sec.Charts[0].SVG == "" || sec.Charts[1].SVG == "" {
		t.Fatalf("qc section: %+v", sec)
	}
	if rows := sec.Charts[1].Table.Rows; len(rows) != 2 || rows[1][2].Text != "correctness" {
		t.Errorf("flags table %v", rows)
	}
	if c := sec.Charts[0].Table.Rows[1][3]; c.IsNum {
		t.Errorf("no gold answers shown as %v", c.Num)
	}
	quiet := qcSection(&QCData{Scope: "pilot", Annotators: []QCAnnotator{{Name: "bob", GoldAccuracy: math.NaN(), IntraAgreement: math.NaN()}}})
	if quiet.Charts[0].Note == "" || quiet.Charts[1].Note != "No check raised a flag." {
		t.Errorf("no gold, no flags: %q / %q", quiet.Charts[0].Note, quiet.Charts[1].Note)
	}
	if s := qcSection(nil); !strings.HasPrefix(s.Omitted, "Left out: ") {
		t.Errorf("no QC: %q", s.Omitted)
	}
}
