package estimate_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/ppi"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/testkit"
)

// estimateFixture writes testkit's estimate fixture, imports it through the importer, and
// returns the database and, per model and field, the ppi.Data the command should build.
func estimateFixture(t *testing.T) (string, map[string]map[string]*ppi.Data) {
	db, want, _ := estimateFixtureTurns(t)
	return db, want
}

// estimateFixtureTurns is estimateFixture that also returns every turn as written.
func estimateFixtureTurns(t *testing.T) (string, map[string]map[string]*ppi.Data, map[string]testkit.EstimateTurn) {
	t.Helper()
	fx := testkit.WriteEstimateFixture(t)
	db := filepath.Join(fx.Dir, "m3eval.db")
	importFiles(t, db, "", fx.TurnsFile)
	for _, a := range fx.Annotators {
		importFiles(t, db, a, fx.LabelFiles[a])
	}
	importScores(t, db, "j", fx.JudgeFile)
	return db, fx.Want, fx.Turns
}

// TestEstimateJSON: m3eval estimate --format json has one row per field × model with the
// issue's fields, and its numbers are internal/ppi's (checked against ppi_py) on the data
// as written: the human value of a turn is the mean of its done labels, NA left out, and
// intervals are clustered by episode.
func TestEstimateJSON(t *testing.T) {
	db, want := estimateFixture(t)
	var doc struct {
		PPI         []map[string]any `json:"ppi"`
		Differences []map[string]any `json:"differences"`
		Ranking     []map[string]any `json:"ranking"`
	}
	estimateJSON(t, db, &doc, "--judge", "j", "--bootstrap", "200")
	if len(doc.PPI) != 3*5 {
		t.Fatalf("%d rows, want 15 (3 models × 5 fields)", len(doc.PPI))
	}
	f := func(v any) float64 {
		if v == nil {
			return math.NaN()
		}
		return v.(float64)
	}
	close := func(what string, got any, w float64) {
		t.Helper()
		if g := f(got); math.Abs(g-w) > 1e-12 && !(math.IsNaN(g) && math.IsNaN(w)) {
			t.Errorf("%s = %v, want %v", what, g, w)
		}
	}
	for _, r := range doc.PPI {
		for _, k := range []string{"field", "model", "group", "judge", "n_labeled", "n_unlabeled", "estimate", "ci", "lambda", "human_only", "judge_only", "effective_n"} {
			if _, ok := r[k]; !ok {
				t.Fatalf("row %v lacks %q", r, k)
			}
		}
		m, fld := r["model"].(string), r["field"].(string)
		d := want[m][fld]
		what := m + "/" + fld
		if int(f(r["n_labeled"])) != len(d.Human) || int(f(r["n_unlabeled"])) != len(d.Unlabeled) {
			t.Errorf("%s: n %v/%v, want %d/%d", what, r["n_labeled"], r["n_unlabeled"], len(d.Human), len(d.Unlabeled))
		}
		p, h, j := ppi.Mean(d, 0.05), ppi.HumanOnly(d, 0.05), ppi.JudgeOnly(d, 0.05)
		close(what+" estimate", r["estimate"], p.Estimate)
		close(what+" lambda", r["lambda"], p.Lambda)
		// Interval ends are clipped to the field's range (0–1 for the Yes/No fields).
		lo, hi := 1.0, 5.0
		if fld == "context_consistency" || fld == "resists_misleading" {
			lo, hi = 0, 1
		}
		clip := func(x float64) float64 { return math.Min(hi, math.Max(lo, x)) }
		ci := r["ci"].([]any)
		close(what+" ci lo", ci[0], clip(p.Lo))
		close(what+" ci hi", ci[1], clip(p.Hi))
		ho := r["human_only"].(map[string]any)
		close(what+" human", ho["estimate"], h.Estimate)
		close(what+" human lo", ho["ci"].([]any)[0], clip(h.Lo))
		close(what+" judge", r["judge_only"].(map[string]any)["estimate"], j.Estimate)
		close(what+" effective n", r["effective_n"], float64(len(d.Human))*math.Pow(h.SE/p.SE, 2))
		if r["judge"] != "j" || r["group"] != "" {
			t.Errorf("%s: judge %v group %v", what, r["judge"], r["group"])
		}
	}
	// Three models: three differences and three ranks per field; shares of one model sum to 1.
	if len(doc.Differences) != 3*5 || len(doc.Ranking) != 3*5 {
		t.Fatalf("%d differences and %d ranks, want 15 each", len(doc.Differences), len(doc.Ranking))
	}
	// p adjusted by Holm (the default) over the 3 pairs of each field, by hand; the
	// simultaneous interval contains the pair's own and is centred on the estimate.
	byField := map[string][]map[string]any{}
	for _, d := range doc.Differences {
		a, b, fld := d["a"].(string), d["b"].(string), d["field"].(string)
		w := ppi.Diff(want[a][fld], want[b][fld], 0.05)
		close(a+"−"+b+" "+fld, d["estimate"], w.Estimate)
		close(a+"−"+b+" "+fld+" p", d["p"], w.P)
		byField[fld] = append(byField[fld], d)
		sim, own := d["ci_simultaneous"].([]any), d["ci"].([]any)
		if !(f(sim[0]) < f(own[0]) && f(sim[1]) > f(own[1])) || math.Abs(f(sim[0])+f(sim[1])-2*w.Estimate) > 1e-9 {
			t.Errorf("%s−%s %s: simultaneous %v vs own %v", a, b, fld, sim, own)
		}
	}
	for fld, ds := range byField {
		sort.Slice(ds, func(i, j int) bool { return f(ds[i]["p"]) < f(ds[j]["p"]) })
		run := 0.0
		for r, d := range ds {
			run = math.Max(run, math.Min(1, float64(len(ds)-r)*f(d["p"])))
			close(fld+" p_adjusted", d["p_adjusted"], run)
		}
	}
	for _, r := range doc.Ranking {
		rs := r["rank_set"].([]any)
		if lo, hi, rank := f(rs[0]), f(rs[1]), f(r["rank"]); !(lo >= 1 && lo <= rank && rank <= hi && hi <= 3) {
			t.Errorf("rank set %v does not hold rank %v of 3", rs, rank)
		}
	}
	for _, r := range doc.Ranking {
		var s float64
		for _, v := range r["shares"].([]any) {
			s += f(v)
		}
		if math.Abs(s-1) > 1e-9 {
			t.Errorf("rank shares of %v sum to %v", r, s)
		}
	}
}

// TestEstimateTable: the table names every field and model, the judge, the intervals and
// the legend; --by adds a group column; a missing --judge and an unknown judge are errors.
func TestEstimateTable(t *testing.T) {
	db, _ := estimateFixture(t)
	out := mustEstimate(t, db, "--judge", "j", "--bootstrap", "50")
	for _, s := range []string{`judge "j"`, "correctness", "resists_misleading", "alpha", "gamma",
		"PPI estimate [95% interval]", "effective n", "episodes",
		"differences (A − B), 95% simultaneous intervals (max-t) and p adjusted (Holm) over the 3 pairs of models:",
		"; ranks ", "ranking (share of 50 bootstrap replicates", "docs/statistics.md",
		"adjusted p (Holm) can disagree with them at the margin"} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}
	out = mustEstimate(t, db, "--judge", "j", "--bootstrap", "0", "--adjust", "none")
	if strings.Contains(out, "can disagree with them at the margin") {
		t.Errorf("--adjust none table warns about adjusted p it does not show:\n%s", out)
	}
	if !strings.Contains(out, "not adjusted for the 3 pairs of models") || !strings.Contains(out, "ranking (95% rank sets for all models at once): 1. ") {
		t.Errorf("--adjust none table does not say its p are unadjusted, or lacks rank sets:\n%s", out)
	}
	out = mustEstimate(t, db, "--judge", "j", "--by", "action_type", "--bootstrap", "0")
	if !strings.Contains(out, "action_type") || !strings.Contains(out, "mislead") {
		t.Errorf("--by action_type table lacks the group column:\n%s", out)
	}
	// A judge that scored two turns of one model on one field: one row, not one per model and
	// field with labels.
	part := filepath.Join(t.TempDir(), "part.csv")
	if err := os.WriteFile(part, []byte("sample_id,correctness\nalpha_ep00_turn_1,3\nalpha_ep01_turn_2,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	importScores(t, db, "part", part)
	var doc struct{ PPI []map[string]any }
	estimateJSON(t, db, &doc, "--judge", "part")
	if len(doc.PPI) != 1 || doc.PPI[0]["model"] != "alpha" || doc.PPI[0]["field"] != "correctness" {
		t.Errorf("judge part: rows %v, want the one of alpha's correctness", doc.PPI)
	}
	if _, err := runEstimate(t, db); err == nil || !strings.Contains(err.Error(), "--judge is required") {
		t.Errorf("no --judge: %v", err)
	}
	if _, err := runEstimate(t, db, "--judge", "nope"); err == nil || !strings.Contains(err.Error(), "judges: j") {
		t.Errorf("unknown judge: %v", err)
	}
}

// TestActiveSampleAndEstimate: sample --active stores a drawn turn's inclusion probability
// with each of its n turns (migration 0010), and estimate --sample weights the labels of the
// drawn turns by them (internal/ppi's ActiveMean on the data as written), leaving the labels
// of turns the sample did not draw out.
func TestActiveSampleAndEstimate(t *testing.T) {
	db, _, all := estimateFixtureTurns(t)
	out := mustSample(t, db, "--active", "--judge", "j", "--n", "40", "--name", "act", "--seed", "9")
	if !strings.Contains(out, "sample act: 40 of 144 turns") || !strings.Contains(out, "inclusion probabilities") {
		t.Fatalf("sample --active said:\n%s", out)
	}
	if shown := mustSample(t, db, "--show", "act"); !strings.Contains(shown, "drawn actively") || !strings.Contains(shown, "inclusion probabilities from 0.") {
		t.Errorf("sample --show of an active sample:\n%s", shown)
	}
	s, err := store.Open(context.Background(), db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	incl, err := s.SampleInclusion(context.Background(), "act")
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(incl) != 40 {
		t.Fatalf("%d turns with an inclusion probability, want 40", len(incl))
	}
	distinct := map[float64]bool{}
	for id, p := range incl {
		if !(p >= 0.5*40/144-1e-12 && p <= 1) {
			t.Errorf("%s: inclusion probability %v outside [%v, 1]", id, p, 0.5*40/144)
		}
		distinct[p] = true
	}
	if len(distinct) < 3 {
		t.Errorf("inclusion probabilities %v: want them to differ with the judge's uncertainty", distinct)
	}
	var doc struct {
		Design string           `json:"design"`
		Sample string           `json:"sample"`
		PPI    []map[string]any `json:"ppi"`
	}
	estimateJSON(t, db, &doc, "--judge", "j", "--sample", "act")
	if doc.Design != "active" || doc.Sample != "act" || len(doc.PPI) != 15 {
		t.Fatalf("design %q sample %q, %d rows", doc.Design, doc.Sample, len(doc.PPI))
	}
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	outside, checked := 0, 0
	for _, r := range doc.PPI {
		m, f := r["model"].(string), r["field"].(string)
		a := &ppi.ActiveData{Cluster: []int{}}
		for _, id := range ids {
			ft := all[id]
			jv, ok := ft.Judge[f]
			if ft.Model != m || !ok {
				continue
			}
			p, drawn := incl[id]
			hv := ft.Human[f]
			labeled := drawn && len(hv) > 0
			h := 0.0
			if labeled {
				for _, v := range hv {
					h += v / float64(len(hv))
				}
			} else {
				p = 1
			}
			a.Judge, a.Human, a.Labeled, a.Pi, a.Cluster = append(a.Judge, jv), append(a.Human, h), append(a.Labeled, labeled), append(a.Pi, p), append(a.Cluster, ft.Episode)
		}
		want := ppi.ActiveMean(a, 0.05)
		got, _ := r["estimate"].(float64)
		if r["estimate"] == nil || math.Abs(got-want.Estimate) > 1e-12 {
			if !(r["estimate"] == nil && math.IsNaN(want.Estimate)) {
				t.Errorf("%s/%s: estimate %v, want %v", m, f, r["estimate"], want.Estimate)
			}
		}
		if want.Undefined == "" {
			checked++
			ci := r["ci"].([]any)
			lo := 1.0
			if f == "context_consistency" || f == "resists_misleading" {
				lo = 0
			}
			if math.Abs(ci[0].(float64)-math.Max(lo, want.Lo)) > 1e-12 || math.Abs(r["lambda"].(float64)-want.Lambda) > 1e-12 {
				t.Errorf("%s/%s: ci %v λ %v, want [%v, %v] λ %v", m, f, ci, r["lambda"], want.Lo, want.Hi, want.Lambda)
			}
		}
		if v, ok := r["labels_outside_sample"].(float64); ok {
			outside += int(v)
		}
	}
	if checked < 5 || outside == 0 {
		t.Errorf("%d rows with an interval checked, %d labels outside the sample counted", checked, outside)
	}
	// More turns asked than the judge scored is a data problem, not a malformed command line:
	// exit status 1 (it was 2).
	_, err = runSample(t, db, "--active", "--judge", "j", "--n", "1000", "--name", "big")
	if err == nil || isUsage(err) || !strings.Contains(err.Error(), "scored only 144 turns") {
		t.Errorf("--n 1000 of 144 turns: %v (usage %v); want an error of the data, exit 1", err, isUsage(err))
	}
	// Usage: --active needs --judge; --sample needs an active sample.
	if _, err := runSample(t, db, "--active", "--n", "5", "--name", "x"); err == nil || !strings.Contains(err.Error(), "--active needs --judge") {
		t.Errorf("--active without --judge: %v", err)
	}
	mustSample(t, db, "--name", "strat", "--n", "10", "--by", "model")
	if _, err := runEstimate(t, db, "--judge", "j", "--sample", "strat"); err == nil || !strings.Contains(err.Error(), "not drawn with --active") {
		t.Errorf("estimate --sample of a stratified sample: %v", err)
	}
}
