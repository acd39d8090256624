package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/m3bench/m3eval/internal/report"
	"github.com/m3bench/m3eval/internal/testkit"
)

// reportSections are the sections every report has, in order (left-out ones say why).
var reportSections = []string{"campaign", "agreement", "judges", "model-scores", "groups", "trends", "metrics", "qc", "illusion"}

// chromiumOrSkip returns the Chromium to test with. Without one the test is skipped with a
// message, except under CI, where a missing browser is a failure.
func chromiumOrSkip(t *testing.T) string {
	t.Helper()
	p, err := report.FindChromium()
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("CI is set but %v", err)
	}
	t.Skipf("skipping the browser test: %v (CI unset; .ci/run installs it)", err)
	return ""
}

// artifactDir is where screenshots are kept for a person to look at: $M3EVAL_ARTIFACTS, or
// a fixed directory under the system temp dir (not a golden image: nothing compares them).
func artifactDir(t *testing.T) string {
	dir := os.Getenv("M3EVAL_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "m3eval-report-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// page is what the browser saw of one report.
type page struct {
	Console  []string // console errors and uncaught exceptions
	Requests []string // every URL the page asked for
	DOM      domReport
	Mobile   struct{ ScrollWidth, InnerWidth int }
	Print    []printBox
}

type domReport struct {
	Sections []struct {
		ID      string `json:"id"`
		Omitted string `json:"omitted"`
	} `json:"sections"`
	Charts []struct {
		ID      string     `json:"id"`
		Section string     `json:"section"`
		HasSVG  bool       `json:"hasSVG"`
		W       float64    `json:"w"`
		H       float64    `json:"h"`
		Marks   int        `json:"marks"`
		Cut     bool       `json:"cut"` // the table scrolls sideways at 1280 px
		Columns []string   `json:"columns"`
		Rows    [][]domCel `json:"rows"`
	} `json:"charts"`
	Scripts int `json:"scripts"`
}

type domCel struct {
	Text string  `json:"t"`
	V    *string `json:"v"`
}

type printBox struct {
	ID string  `json:"id"`
	W  float64 `json:"w"`
	H  float64 `json:"h"`
}

// domScript reads the sections, every chart's SVG size and marks (filled or stroked shapes
// in a colour other than the white background, black axes and grey grid), and every table.
const domScript = `(() => {
  const grey = c => { const m = /#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})/i.exec(c || ""); return !m || (m[1] === m[2] && m[2] === m[3]); };
  const sections = [...document.querySelectorAll("section[data-section]")].map(s => ({id: s.id, omitted: (s.querySelector("p.omitted") || {}).textContent || ""}));
  const charts = [...document.querySelectorAll("figure[data-chart]")].map(f => {
    const svg = f.querySelector(".plot svg");
    let w = 0, h = 0, marks = 0;
    if (svg) {
      const r = svg.getBoundingClientRect(); w = r.width; h = r.height;
      for (const p of svg.querySelectorAll("path")) {
        const st = p.getAttribute("style") || "";
        const fill = (/fill:([^;]+)/.exec(st) || [])[1], stroke = (/stroke:([^;]+)/.exec(st) || [])[1];
        const b = p.getBBox();
        if ((b.width > 0 || b.height > 0) && ((fill && fill !== "none" && !grey(fill)) || (stroke && stroke !== "none" && !grey(stroke)))) marks++;
      }
    }
    const t = f.querySelector("table");
    const box = f.querySelector(".numbers");
    return {id: f.id, section: f.closest("section").id, hasSVG: !!svg, w, h, marks,
      cut: !!box && box.scrollWidth > box.clientWidth + 1,
      columns: [...t.tHead.rows[0].cells].map(c => c.textContent),
      rows: [...t.tBodies[0].rows].map(r => [...r.cells].map(c => ({t: c.textContent, v: c.dataset.v === undefined ? null : c.dataset.v})))};
  });
  return JSON.stringify({sections, charts, scripts: document.scripts.length});
})()`

const printScript = `JSON.stringify([...document.querySelectorAll(".plot svg")].map(s => { const r = s.getBoundingClientRect(); return {id: s.closest("figure").id, w: r.width, h: r.height}; }))`

// openReport loads the file in headless Chromium, records console errors and requests,
// reads the DOM, takes the two screenshots, and measures the charts under print media at
// A4 width.
func openReport(t *testing.T, chromium, file, shotName string) *page {
	t.Helper()
	// A profile of our own rather than t.TempDir(): Chromium's helpers may still be writing
	// into it for a moment after the browser closes, which would fail TempDir's cleanup.
	profile, err := os.MkdirTemp("", "m3eval-chromium-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; i < 50 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium), chromedp.UserDataDir(profile),
		chromedp.Flag("headless", "new"), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(1280, 800),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	defer cancelT()

	pg := &page{}
	var mu sync.Mutex
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeWarning {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value))
				}
				pg.Console = append(pg.Console, string(e.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			pg.Console = append(pg.Console, "exception: "+e.ExceptionDetails.Error())
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.LevelError {
				pg.Console = append(pg.Console, "log: "+e.Entry.Text+" "+e.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			pg.Requests = append(pg.Requests, e.Request.URL)
		}
	})
	abs, _ := filepath.Abs(file)
	url := "file://" + abs
	var dom, mobile, print string
	var wide, narrow []byte
	err = chromedp.Run(ctx,
		network.Enable(), cdplog.Enable(), runtime.Enable(),
		chromedp.Navigate(url),
		chromedp.WaitReady("footer"),
		chromedp.Evaluate(domScript, &dom),
		chromedp.EmulateViewport(1280, 800),
		chromedp.CaptureScreenshot(&wide),
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)),
		chromedp.Evaluate(`JSON.stringify({ScrollWidth: document.documentElement.scrollWidth, InnerWidth: window.innerWidth})`, &mobile),
		chromedp.CaptureScreenshot(&narrow),
		// A4 at 96 px per inch less 12 mm margins: 718 px wide.
		chromedp.EmulateViewport(718, 1000),
		emulation.SetEmulatedMedia().WithMedia("print"),
		chromedp.Evaluate(printScript, &print),
	)
	if err != nil {
		t.Fatalf("chromium on %s: %v", file, err)
	}
	// Close the browser and wait for it before the profile is removed.
	if err := chromedp.Cancel(ctx); err != nil {
		t.Logf("closing chromium: %v", err)
	}
	cancelA()
	for _, s := range []struct {
		name string
		b    []byte
	}{{"1280x800", wide}, {"390x844", narrow}} {
		p := filepath.Join(artifactDir(t), shotName+"-"+s.name+".png")
		if err := os.WriteFile(p, s.b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", p)
	}
	for _, x := range []struct {
		s string
		v any
	}{{dom, &pg.DOM}, {mobile, &pg.Mobile}, {print, &pg.Print}} {
		if err := json.Unmarshal([]byte(x.s), x.v); err != nil {
			t.Fatalf("%v: %s", err, x.s)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return pg
}

// checkPage checks what holds for every report: no console error, no request but the file
// itself, every section, every chart drawn with marks inside, nothing cut on a phone or on
// A4.
func checkPage(t *testing.T, pg *page, file string) {
	t.Helper()
	abs, _ := filepath.Abs(file)
	for _, c := range pg.Console {
		t.Errorf("console: %s", c)
	}
	for _, u := range pg.Requests {
		if u != "file://"+abs {
			t.Errorf("request leaving the file: %s", u)
		}
	}
	if len(pg.Requests) == 0 {
		t.Errorf("no request seen at all: the listener is not working")
	}
	var ids []string
	for _, s := range pg.DOM.Sections {
		ids = append(ids, s.ID)
	}
	if !slices.Equal(ids, reportSections) {
		t.Errorf("sections %v, want %v", ids, reportSections)
	}
	if pg.DOM.Scripts != 1 {
		t.Errorf("%d scripts in the page, want the one table sorter", pg.DOM.Scripts)
	}
	for _, c := range pg.DOM.Charts {
		if !c.HasSVG {
			continue
		}
		if c.W < 150 || c.H < 100 || c.Marks < 1 {
			t.Errorf("chart %s: %.0f×%.0f px with %d marks: empty plot area", c.ID, c.W, c.H, c.Marks)
		}
		if len(c.Columns) == 0 {
			t.Errorf("chart %s has no table", c.ID)
		}
		// The campaign's table (seven columns) was cut beside its chart ("first
		// submitted (U…"): a table of many columns goes under the chart (issue #29 item 9).
		if c.ID == "campaign-progress" && c.Cut {
			t.Errorf("chart %s: its table is cut at 1280 px (it scrolls sideways)", c.ID)
		}
	}
	if pg.Mobile.ScrollWidth > pg.Mobile.InnerWidth {
		t.Errorf("390 px wide: the page is %d px wide, it scrolls sideways", pg.Mobile.ScrollWidth)
	}
	for _, b := range pg.Print {
		// A4 less margins: 718 × 1031 px.
		if b.W > 718 || b.H > 1031 {
			t.Errorf("print: chart %s is %.0f×%.0f px, larger than an A4 page", b.ID, b.W, b.H)
		}
	}
}

// chart returns the chart with the given id.
func (pg *page) chart(t *testing.T, id string) ([]string, [][]domCel) {
	t.Helper()
	for _, c := range pg.DOM.Charts {
		if c.ID == id {
			return c.Columns, c.Rows
		}
	}
	t.Fatalf("no chart %s", id)
	return nil, nil
}

// num reads a table cell's exact number; undefined cells (—) are NaN.
func (c domCel) num(t *testing.T) float64 {
	t.Helper()
	if c.V == nil {
		if c.Text != "—" {
			t.Fatalf("cell %q is neither a number nor undefined", c.Text)
		}
		return math.NaN()
	}
	x, err := strconv.ParseFloat(*c.V, 64)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// jsonPath walks a decoded JSON object along dotted keys.
func jsonPath(v any, keys ...string) any {
	for _, k := range keys {
		for _, part := range strings.Split(k, ".") {
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[part]
		}
	}
	return v
}

// sameNumber compares a table's number with the score JSON's (null: undefined) exactly.
func sameNumber(t *testing.T, what string, got float64, want any) {
	t.Helper()
	w, ok := want.(float64)
	switch {
	case want == nil && math.IsNaN(got):
	case ok && got == w:
	default:
		t.Errorf("%s: report %v, m3eval score %v", what, got, want)
	}
}

func col(t *testing.T, cols []string, name string) int {
	t.Helper()
	i := slices.Index(cols, name)
	if i < 0 {
		t.Fatalf("no column %q in %v", name, cols)
	}
	return i
}

// TestReportInChromium renders the report of the score fixture (three annotators, two
// judges), opens it in headless Chromium and checks the page, then checks every number
// in the charts' tables against m3eval score --format json on the same database.
func TestReportInChromium(t *testing.T) {
	chromium := chromiumOrSkip(t)
	db := scoreDB(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	mustRun(t, "--db", db, "report", "-o", file, "--bootstrap", "200", "--seed", "7")
	pg := openReport(t, chromium, file, "score-fixture")
	checkPage(t, pg, file)
	for _, s := range pg.DOM.Sections {
		if s.ID == "agreement" || s.ID == "judges" || s.ID == "campaign" || s.ID == "groups" {
			if s.Omitted != "" {
				t.Errorf("section %s left out: %s", s.ID, s.Omitted)
			}
		}
	}
	score := scoreJSON(t, db, "--bootstrap", "200", "--seed", "7", "--by", "action_type")
	fields := score["fields"].(map[string]any)
	checked := 0

	cols, rows := pg.chart(t, "agreement-forest")
	for _, r := range rows {
		f, key := r[col(t, cols, "field")].Text, r[col(t, cols, "key")].Text
		sameNumber(t, f+"."+key, r[col(t, cols, "estimate")].num(t), jsonPath(fields, f, key))
		boot := strings.ReplaceAll(key, ".", "_")
		ci, _ := jsonPath(fields, f, "bootstrap", boot, "ci95_percentile").([]any)
		lo, hi := r[col(t, cols, "ci95 low")].num(t), r[col(t, cols, "ci95 high")].num(t)
		if ci == nil {
			if !math.IsNaN(lo) || !math.IsNaN(hi) {
				t.Errorf("%s.%s: interval [%v, %v] where m3eval score has none", f, key, lo, hi)
			}
		} else {
			sameNumber(t, f+"."+boot+" lo", lo, ci[0])
			sameNumber(t, f+"."+boot+" hi", hi, ci[1])
		}
		sameNumber(t, f+".n_items", r[col(t, cols, "items")].num(t), jsonPath(fields, f, "n_items"))
		checked += 4
	}
	if len(rows) != 3*len(fields) {
		t.Errorf("forest table has %d rows for %d fields", len(rows), len(fields))
	}

	for f, fv := range fields {
		cols, rows := pg.chart(t, "kappa-"+strings.ReplaceAll(f, "_", "-"))
		pairs := jsonPath(fv, "pairwise").([]any)
		if len(rows) != len(pairs) {
			t.Errorf("%s: %d pairs in the report, %d in score", f, len(rows), len(pairs))
		}
		for i, r := range rows {
			p := pairs[i].(map[string]any)
			raters := p["raters"].([]any)
			if r[0].Text != raters[0] || r[1].Text != raters[1] {
				t.Errorf("%s pair %d: %s/%s vs %v", f, i, r[0].Text, r[1].Text, raters)
			}
			sameNumber(t, f+" pair n", r[col(t, cols, "items both rated")].num(t), p["n_items"])
			sameNumber(t, f+" pair %", r[col(t, cols, "percent agreement")].num(t), p["percent_agreement"])
			sameNumber(t, f+" pair κ", r[col(t, cols, "kappa")].num(t), p[r[col(t, cols, "key")].Text])
			checked += 3
		}
		cols, rows = pg.chart(t, "labels-"+strings.ReplaceAll(f, "_", "-"))
		total := 0.0
		var names []any
		for _, r := range rows {
			total += r[col(t, cols, "labels")].num(t)
			names = append(names, r[0].Text)
		}
		sameNumber(t, f+" n_ratings", total, jsonPath(fv, "n_ratings"))
		if fmt.Sprint(names) != fmt.Sprint(jsonPath(fv, "raters")) {
			t.Errorf("%s: annotators %v, score %v", f, names, jsonPath(fv, "raters"))
		}
		checked++

		for _, judge := range []string{"gpt", "rules"} {
			vs := jsonPath(fv, "human_vs_auto_by_judge", judge)
			cols, rows := pg.chart(t, "confusion-"+judge+"-"+strings.ReplaceAll(f, "_", "-"))
			var diag, sum float64
			for _, r := range rows {
				n := r[col(t, cols, "items")].num(t)
				sum += n
				if r[0].Text == r[1].Text {
					diag += n
				}
			}
			sameNumber(t, f+" "+judge+" confusion total", sum, jsonPath(vs, "n_items_majority"))
			if em, ok := jsonPath(vs, "exact_match_accuracy").(float64); ok && math.Abs(diag/sum-em) > 1e-12 {
				t.Errorf("%s %s: confusion diagonal %v/%v, exact match %v", f, judge, diag, sum, em)
			}
			checked += 2
		}
	}

	cols, rows = pg.chart(t, "judges-correlation")
	for _, r := range rows {
		j, f := r[col(t, cols, "judge")].Text, r[col(t, cols, "field")].Text
		vs := jsonPath(fields, f, "human_vs_auto_by_judge", j)
		for _, k := range []string{"pearson", "spearman", "kendall_tau_b"} {
			sameNumber(t, j+" "+f+" "+k, r[col(t, cols, k)].num(t), jsonPath(vs, k))
		}
		sameNumber(t, j+" "+f+" n", r[col(t, cols, "items correlated")].num(t), jsonPath(vs, "n_items_correlation"))
		ci := jsonPath(fields, f, "bootstrap", "human_vs_auto_"+j+"_spearman", "ci95_percentile").([]any)
		sameNumber(t, j+" "+f+" ρ lo", r[col(t, cols, "ci95 low")].num(t), ci[0])
		sameNumber(t, j+" "+f+" ρ hi", r[col(t, cols, "ci95 high")].num(t), ci[1])
		checked += 6
	}
	cols, rows = pg.chart(t, "judges-kappa")
	for _, r := range rows {
		j, f := r[col(t, cols, "judge")].Text, r[col(t, cols, "field")].Text
		vs := jsonPath(fields, f, "human_vs_auto_by_judge", j)
		sameNumber(t, j+" "+f+" majority", r[col(t, cols, "items with a majority")].num(t), jsonPath(vs, "n_items_majority"))
		sameNumber(t, j+" "+f+" tied", r[col(t, cols, "items tied")].num(t), jsonPath(vs, "n_items_tied_majority"))
		sameNumber(t, j+" "+f+" exact", r[col(t, cols, "exact match")].num(t), jsonPath(vs, "exact_match_accuracy"))
		sameNumber(t, j+" "+f+" κ", r[col(t, cols, "kappa")].num(t), jsonPath(vs, r[col(t, cols, "key")].Text))
		checked += 4
	}
	groups := score["groups"].(map[string]any)
	cols, rows = pg.chart(t, "bygroup-correctness")
	if len(rows) != 2*len(groups) {
		t.Errorf("per action type: %d rows for %d groups and 2 judges", len(rows), len(groups))
	}
	for _, r := range rows {
		g, j := r[col(t, cols, "action_type")].Text, r[col(t, cols, "judge")].Text
		vs := jsonPath(groups, g, "fields", "correctness", "human_vs_auto_by_judge", j)
		for _, k := range []string{"pearson", "spearman", "kendall_tau_b"} {
			sameNumber(t, g+" "+j+" "+k, r[col(t, cols, k)].num(t), jsonPath(vs, k))
		}
		if ci, ok := jsonPath(groups, g, "fields", "correctness", "bootstrap", "human_vs_auto_"+j+"_spearman", "ci95_percentile").([]any); ok {
			sameNumber(t, g+" "+j+" ρ lo", r[col(t, cols, "ci95 low")].num(t), ci[0])
			sameNumber(t, g+" "+j+" ρ hi", r[col(t, cols, "ci95 high")].num(t), ci[1])
		}
		checked += 3
	}

	for f := range fields {
		cols, rows := pg.chart(t, "group-labels-"+strings.ReplaceAll(f, "_", "-"))
		if len(rows) != len(groups) {
			t.Errorf("%s: %d groups in the report, %d in score", f, len(rows), len(groups))
		}
		for _, r := range rows {
			g := r[col(t, cols, "action_type")].Text
			sameNumber(t, g+" "+f+" labels", r[col(t, cols, "labels")].num(t), jsonPath(groups, g, "fields", f, "n_ratings"))
			checked++
		}
	}

	turnOf := func(rec map[string]any) (int, bool) { return int(rec["turn"].(float64)), true }
	checkTrend(t, pg, "trend-turn", "turn", labelMeans(t, turnOf,
		filepath.Join(scoreFixture, "labels_alice.jsonl"), filepath.Join(scoreFixture, "labels_bob.jsonl"), filepath.Join(scoreFixture, "labels_carol.jsonl")))

	// Campaign counts against m3eval status.
	status := mustRun(t, "--db", db, "status")
	cols, rows = pg.chart(t, "campaign-progress")
	for _, r := range rows {
		want := fmt.Sprintf(`(?m)^\s*%s\s+%s\s+%s\s+%s\s+%s\s`, regexp.QuoteMeta(r[0].Text),
			r[col(t, cols, "done")].Text, r[col(t, cols, "draft")].Text, r[col(t, cols, "flagged")].Text, r[col(t, cols, "skipped")].Text)
		if !regexp.MustCompile(want).MatchString(status) {
			t.Errorf("campaign row %v not in m3eval status:\n%s", r, status)
		}
	}

	// Quality control against m3eval qc --format json.
	qcOut := filepath.Join(dir, "qc.json")
	mustRun(t, "--db", db, "qc", "--format", "json", "-o", qcOut)
	var qc struct {
		Annotators []map[string]any
	}
	testkit.ReadJSON(t, qcOut, &qc)
	cols, rows = pg.chart(t, "qc-accuracy")
	if len(rows) != len(qc.Annotators) || len(rows) == 0 {
		t.Errorf("qc: %d annotators in the report, %d in m3eval qc", len(rows), len(qc.Annotators))
	}
	nFlags := 0
	for i, r := range rows {
		w := qc.Annotators[i]
		if r[0].Text != w["annotator"] {
			t.Errorf("qc row %d: %s vs %v", i, r[0].Text, w["annotator"])
		}
		for c, k := range map[string]string{"items": "items", "gold answers": "gold_answers", "gold accuracy": "gold_accuracy",
			"repeated answers": "repeat_answers", "repeat agreement": "intra_agreement", "rushed": "rushed",
			"median active (s)": "median_active_seconds", "missing comments": "missing_comments"} {
			sameNumber(t, "qc "+r[0].Text+" "+c, r[col(t, cols, c)].num(t), w[k])
			checked++
		}
		flags, _ := w["flags"].([]any)
		sameNumber(t, "qc "+r[0].Text+" flags", r[col(t, cols, "flags")].num(t), float64(len(flags)))
		nFlags += len(flags)
	}
	if _, rows := pg.chart(t, "qc-flags"); len(rows) != nFlags {
		t.Errorf("qc flags: %d in the report, %d in m3eval qc", len(rows), nFlags)
	}

	// Action-space metrics against m3eval score --metrics --format json.
	metOut := filepath.Join(dir, "metrics.json")
	mustRun(t, "--db", db, "score", "--metrics", "--bootstrap", "200", "--seed", "7", "--format", "json", "-o", metOut)
	var met struct {
		Metrics []map[string]any
	}
	testkit.ReadJSON(t, metOut, &met)
	nMet := 0
	for _, c := range pg.DOM.Charts {
		if !strings.HasPrefix(c.ID, "metric-") || strings.HasPrefix(c.ID, "metric-trend-") {
			continue
		}
		for _, r := range c.Rows {
			a, m := r[col(t, c.Columns, "action_type")].Text, r[col(t, c.Columns, "model")].Text
			found := false
			for _, w := range met.Metrics {
				if w["action_type"] == a && w["model"] == m && "metric-"+strings.ReplaceAll(w["metric"].(string), "_", "-") == c.ID {
					found = true
					for col2, k := range map[string]string{"n": "n", "value": "value", "ci95 low": "ci_low", "ci95 high": "ci_high"} {
						sameNumber(t, c.ID+" "+a+" "+m+" "+col2, r[col(t, c.Columns, col2)].num(t), w[k])
					}
					checked += 4
				}
			}
			if !found {
				t.Errorf("%s: %s/%s not in m3eval score --metrics", c.ID, a, m)
			}
			nMet++
		}
	}
	if nMet != len(met.Metrics) {
		t.Errorf("%d metric rows in the report, %d in m3eval score --metrics", nMet, len(met.Metrics))
	}

	// The page's tables hold exactly the numbers of --format json.
	jsonOut := filepath.Join(dir, "report.json")
	mustRun(t, "--db", db, "report", "--format", "json", "-o", jsonOut, "--bootstrap", "200", "--seed", "7")
	var rj struct {
		Sections []struct {
			Charts []struct {
				ID    string
				Table struct{ Rows [][]any }
			}
		}
	}
	testkit.ReadJSON(t, jsonOut, &rj)
	nCharts := 0
	for _, s := range rj.Sections {
		for _, c := range s.Charts {
			nCharts++
			_, rows := pg.chart(t, c.ID)
			if len(rows) != len(c.Table.Rows) {
				t.Errorf("%s: %d rows in the page, %d in JSON", c.ID, len(rows), len(c.Table.Rows))
				continue
			}
			for i, r := range rows {
				for k, cell := range r {
					switch w := c.Table.Rows[i][k].(type) {
					case float64:
						sameNumber(t, c.ID, cell.num(t), w)
					case nil:
						if cell.Text != "—" {
							t.Errorf("%s row %d col %d: %q, JSON null", c.ID, i, k, cell.Text)
						}
					case string:
						if cell.Text != w {
							t.Errorf("%s row %d col %d: %q, JSON %q", c.ID, i, k, cell.Text, w)
						}
					}
				}
			}
		}
	}
	if nCharts != len(pg.DOM.Charts) {
		t.Errorf("%d charts in JSON, %d in the page", nCharts, len(pg.DOM.Charts))
	}
	t.Logf("%d charts; %d numbers compared with m3eval score --format json", nCharts, checked)
	if checked < 200 {
		t.Errorf("only %d numbers compared", checked)
	}
}

// labelMeans averages the done labels of the scale fields in the given labeled JSONL files
// per key of their turn record (read here, not through m3eval), as field → key → mean.
func labelMeans(t *testing.T, key func(rec map[string]any) (int, bool), files ...string) map[string]map[int]float64 {
	t.Helper()
	type acc struct{ sum, n float64 }
	sums := map[string]map[int]*acc{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			ha := rec["human_annotation"].(map[string]any)
			k, ok := key(rec)
			if ha["status"] == "draft" || !ok {
				continue
			}
			for _, field := range []string{"correctness", "reasoning_completeness", "overall_quality"} {
				v, ok := ha[field].(float64)
				if !ok {
					continue
				}
				if sums[field] == nil {
					sums[field] = map[int]*acc{}
				}
				if sums[field][k] == nil {
					sums[field][k] = &acc{}
				}
				sums[field][k].sum += v
				sums[field][k].n++
			}
		}
	}
	out := map[string]map[int]float64{}
	for f, m := range sums {
		out[f] = map[int]float64{}
		for k, a := range m {
			out[f][k] = a.sum / a.n
		}
	}
	return out
}

// checkTrend compares a trend table with means computed from the label files.
func checkTrend(t *testing.T, pg *page, id, xCol string, want map[string]map[int]float64) {
	t.Helper()
	cols, rows := pg.chart(t, id)
	n := 0
	for _, w := range want {
		n += len(w)
	}
	if len(rows) != n || n == 0 {
		t.Errorf("%s: %d rows, want %d", id, len(rows), n)
	}
	for _, r := range rows {
		f, x := r[col(t, cols, "field")].Text, int(r[col(t, cols, xCol)].num(t))
		if got := r[col(t, cols, "mean rating")].num(t); math.Abs(got-want[f][x]) > 1e-12 {
			t.Errorf("%s: %s at %d: %v, from the label files %v", id, f, x, got, want[f][x])
		}
	}
}

// withConfusable copies a JSONL file of turn records into a temporary file, each record with
// meta.confusable_objects set by conf.
func withConfusable(t *testing.T, src string, conf func(rec map[string]any) (int, bool)) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		k, _ := conf(rec)
		rec["meta"] = map[string]any{"confusable_objects": k}
		b, _ := json.Marshal(rec)
		out = append(out, string(b))
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(dst, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestReportHostileNamesAndAbsentData: names that are HTML stay text (no request, no
// script), and sections without data say why, in the browser.
func TestReportHostileNamesAndAbsentData(t *testing.T) {
	chromium := chromiumOrSkip(t)
	db := filepath.Join(t.TempDir(), "m3eval.db")
	fx := func(name string) string { return filepath.Join(scoreFixture, name) }
	// The fixture's turns with meta.confusable_objects = turn mod 3, for the trend chart; the
	// labels carry the same meta, or their turns would differ from the stored ones.
	confusable := func(rec map[string]any) (int, bool) { return int(rec["turn"].(float64)) % 3, true }
	turnsFile := withConfusable(t, fx("turns.jsonl"), confusable)
	labels := []string{withConfusable(t, fx("labels_alice.jsonl"), confusable), withConfusable(t, fx("labels_bob.jsonl"), confusable)}
	mustRun(t, "--db", db, "import", turnsFile)
	evil := `<img src=x onerror="console.error('xss')">`
	mustRun(t, "--db", db, "import", "--annotator", evil, labels[0])
	mustRun(t, "--db", db, "import", "--annotator", "bob</script><script>console.error(1)</script>", labels[1])
	file := filepath.Join(t.TempDir(), "report.html")
	mustRun(t, "--db", db, "report", "-o", file, "--bootstrap", "0")
	pg := openReport(t, chromium, file, "no-judges")
	checkPage(t, pg, file)
	omitted := map[string]string{}
	for _, s := range pg.DOM.Sections {
		omitted[s.ID] = s.Omitted
	}
	for _, id := range []string{"judges", "illusion"} {
		if !strings.HasPrefix(omitted[id], "Left out: ") {
			t.Errorf("section %s: %q, want one line saying why it is left out", id, omitted[id])
		}
	}
	if omitted["agreement"] != "" {
		t.Errorf("agreement left out: %s", omitted["agreement"])
	}
	checkTrend(t, pg, "trend-confusable", "confusable objects", labelMeans(t, confusable, labels...))
	_, rows := pg.chart(t, "kappa-correctness")
	if len(rows) != 1 || (rows[0][0].Text != evil && rows[0][1].Text != evil) {
		t.Errorf("the annotator's name is not shown as text: %+v", rows)
	}
}

// TestReportIllusion adds IllusionBench recall and checks it against m3eval illusion score.
func TestReportIllusion(t *testing.T) {
	chromium := chromiumOrSkip(t)
	dir := t.TempDir()
	db := scoreDB(t)
	var ts, lg strings.Builder
	for i := 0; i < 24; i++ {
		fmt.Fprintf(&ts, `{"image_name":%q}`+"\n", e2eName(i))
	}
	set := filepath.Join(dir, "icon.jsonl")
	os.WriteFile(set, []byte(ts.String()), 0o644)
	for i := 0; i < 24; i++ {
		resp := "Ocean"
		if i%3 == 0 {
			resp = e2eShapes[i%4]
		}
		fmt.Fprintf(&lg, `{"doc_id": %d, "filtered_resps": [%q], "shape_recall": 0}`+"\n", i, resp)
	}
	logf := filepath.Join(dir, "shape.jsonl")
	os.WriteFile(logf, []byte(lg.String()), 0o644)
	file := filepath.Join(dir, "report.html")
	mustRun(t, "--db", db, "report", "-o", file, "--bootstrap", "0",
		"--illusion-testset", "Illusion_ICON="+set, "--illusion", "Illusion_ICON="+logf)
	pg := openReport(t, chromium, file, "illusion")
	checkPage(t, pg, file)

	out, _, err := runBoth(t, "illusion", "score", "--format", "json", "--testset", "Illusion_ICON="+set, "Illusion_ICON="+logf)
	if err != nil {
		t.Fatal(err)
	}
	var want struct{ Rows []map[string]any }
	if err := json.Unmarshal([]byte(out), &want); err != nil {
		t.Fatal(err)
	}
	cols, rows := pg.chart(t, "illusion-recall")
	if len(rows) != len(want.Rows) || len(rows) < 2 {
		t.Fatalf("%d rows, illusion score has %d", len(rows), len(want.Rows))
	}
	for i, r := range rows {
		w := want.Rows[i]
		if r[col(t, cols, "group")].Text != w["group"] || r[col(t, cols, "split")].Text != w["split"] {
			t.Errorf("row %d: %v vs %v", i, r, w)
		}
		for c, k := range map[string]string{"n": "n", "hits": "hits", "recall": "recall", "ci95 low": "ci_low", "ci95 high": "ci_high"} {
			sameNumber(t, fmt.Sprintf("row %d %s", i, c), r[col(t, cols, c)].num(t), w[k])
		}
	}
}

// TestReportPDF prints through Chromium: a PDF with A4 pages comes out whole.
func TestReportPDF(t *testing.T) {
	chromiumOrSkip(t)
	db := scoreDB(t)
	out := filepath.Join(t.TempDir(), "report.pdf")
	mustRun(t, "--db", db, "report", "--pdf", "-o", out, "--bootstrap", "0")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("%PDF-")) || !bytes.Contains(b, []byte("%%EOF")) {
		t.Fatalf("not a whole PDF (%d bytes)", len(b))
	}
	// A4 is 595 × 842 points; Chromium writes MediaBox [0 0 594.96 841.92].
	if !regexp.MustCompile(`/MediaBox \[0 0 59[45]\.\d+ 84[12]\.\d+\]`).Match(b) {
		t.Errorf("no A4 MediaBox in the PDF")
	}
	if p, err := exec.LookPath("pdfinfo"); err == nil {
		info, _ := exec.Command(p, out).Output()
		t.Logf("pdfinfo:\n%s", info)
	}
}

// TestReportEmptyDatabase: turns and a judge but no label yet; every section says why it is
// left out, and the page is still clean.
func TestReportEmptyDatabase(t *testing.T) {
	chromium := chromiumOrSkip(t)
	db := filepath.Join(t.TempDir(), "m3eval.db")
	mustRun(t, "--db", db, "import", filepath.Join(scoreFixture, "turns.jsonl"))
	mustRun(t, "--db", db, "import-scores", "--judge", "gpt", filepath.Join(scoreFixture, "judge_gpt.jsonl"))
	file := filepath.Join(t.TempDir(), "report.html")
	mustRun(t, "--db", db, "report", "-o", file)
	pg := openReport(t, chromium, file, "empty")
	checkPage(t, pg, file)
	for _, s := range pg.DOM.Sections {
		// The judge's action-space metrics read the turns, not the labels.
		if s.ID != "metrics" && !strings.HasPrefix(s.Omitted, "Left out: ") {
			t.Errorf("section %s: %q, want one line saying why it is left out", s.ID, s.Omitted)
		}
	}
	for _, c := range pg.DOM.Charts {
		if !strings.HasPrefix(c.ID, "metric-") {
			t.Errorf("chart %s drawn without a label", c.ID)
		}
	}
}

// TestReportNoGrouping: --by "" leaves out the per-group charts and says so.
func TestReportNoGrouping(t *testing.T) {
	db := scoreDB(t)
	out := filepath.Join(t.TempDir(), "r.json")
	mustRun(t, "--db", db, "report", "--by", "", "--bootstrap", "0", "--format", "json", "-o", out)
	var rep struct {
		Sections []struct {
			ID, Omitted string
			Charts      []struct{ ID string }
		}
	}
	testkit.ReadJSON(t, out, &rep)
	for _, s := range rep.Sections {
		if s.ID == "groups" && !strings.HasPrefix(s.Omitted, "Left out: ") {
			t.Errorf("groups section without --by: %q", s.Omitted)
		}
		for _, c := range s.Charts {
			if strings.HasPrefix(c.ID, "bygroup-") || strings.HasPrefix(c.ID, "group-") {
				t.Errorf("per-group chart %s without --by", c.ID)
			}
		}
	}
}

// The image names of TestReportIllusion's test set (IllusionBench's shape-index-scene-
// difficulty layout; the same as internal/illusion's tests use).
var (
	e2eShapes = []string{"animal", "Stationary", "face_emoji", "vehicle"}
	e2eScenes = []string{"Ocean", "Sand_dune", "Medieval_Village"}
	e2eDiffs  = []string{"Easy", "Medium", "Hard", "Hard"}
)

func e2eName(i int) string {
	return fmt.Sprintf("%s-%d-%s-%s-1.%d-%d.png", e2eShapes[i%4], i, e2eScenes[i%3], e2eDiffs[(i/4)%4], i%5, i)
}
