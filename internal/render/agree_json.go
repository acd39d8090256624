package render

import (
	"bytes"
	"encoding/json"
	"io"
	"sort"

	"github.com/m3bench/m3eval/internal/agree"
)

// kv and obj build JSON objects whose keys keep the order of the oracle's oracle.json, so
// the two files can be read side by side.
type kv struct {
	k string
	v any
}

type obj []kv

func (o *obj) set(k string, v any) { *o = append(*o, kv{k, v}) }

// MarshalJSON implements json.Marshaler.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// statObj is an object holding statistics: each is a number or null, and the reasons of the
// null ones go into "undefined_reason" at the end.
type statObj struct {
	obj
	reasons obj
}

func (s *statObj) stat(k string, v agree.Value) {
	if x, ok := v.Float(); ok {
		s.set(k, x)
		return
	}
	s.set(k, nil)
	s.reasons.set(k, v.Reason())
}

func (s *statObj) done() obj {
	if len(s.reasons) > 0 {
		s.set("undefined_reason", s.reasons)
	}
	return s.obj
}

var kappaKeys = [3]string{"cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic"}

// AgreementInputs describes what was analysed, for the "inputs" block.
type AgreementInputs struct {
	Ratings, Auto, Schema string
	NACategory            bool
	Missing               []string // further missing codes (--missing)
	Bootstrap             int
	Seed                  uint64
	// CI, Cluster, Adjust and Raters record how intervals and p-values were made.
	CI, Cluster, Adjust, Raters string
}

// AgreementJSON writes agreement results as JSON, with the structure and key names of the
// oracle's oracle.json. Each statistic is a number, or null with its reason in
// "undefined_reason" beside it.
func AgreementJSON(w io.Writer, in AgreementInputs, results []agree.FieldResult) error {
	var top obj
	top.set("m3eval", "agree 1")
	var inputs obj
	inputs.set("ratings", in.Ratings)
	inputs.set("auto", nullIfEmpty(in.Auto))
	inputs.set("schema", nullIfEmpty(in.Schema))
	inputs.setStatistics(in.NACategory, in.Missing, in.Bootstrap, in.Seed, in.CI, in.Cluster, in.Adjust, in.Raters)
	top.set("inputs", inputs)
	var fields obj
	for _, r := range results {
		fields.set(r.Field.Name, fieldJSON(r))
	}
	top.set("fields", fields)
	return writeJSONIndent(w, top, " ")
}

// setStatistics records the inputs agree's and score's JSON share: the missing tokens and
// how the intervals and p-values were made (those only with a bootstrap's interval method).
func (o *obj) setStatistics(naCategory bool, missing []string, bootstrap int, seed uint64, ci, cluster, adjust, raters string) {
	if naCategory {
		o.set("missing_tokens", append([]string{""}, missing...))
	} else {
		o.set("missing_tokens", append([]string{"", "NA"}, missing...))
	}
	o.set("bootstrap", bootstrap)
	o.set("seed", seed)
	if ci != "" {
		o.set("ci", ci)
		o.set("bootstrap_unit", unitName(cluster))
		o.set("p_adjustment", adjust)
		o.set("raters", raters)
	}
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func categoriesJSON(f agree.Field, labels []string) any {
	if f.Type != agree.Ordinal {
		if labels == nil {
			return []string{}
		}
		return labels
	}
	out := []int64{}
	for _, l := range labels {
		if v, ok := agree.ParseInt(l); ok {
			out = append(out, v)
		}
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func fieldJSON(r agree.FieldResult) obj {
	ordinal := r.Field.Type == agree.Ordinal
	f := statObj{}
	f.set("type", r.Field.Type.String())
	f.set("categories", categoriesJSON(r.Field, r.Field.Categories))
	f.set("raters", orEmpty(r.Raters))
	f.set("raters_without_ratings", orEmpty(r.RatersWithoutRatings))
	f.set("n_items", r.NItems)
	f.set("n_ratings", r.NRatings)
	f.set("n_missing_cells", r.NMissingCells)
	f.set("n_items_pairable", r.NItemsPairable)
	f.set("n_items_complete", r.NItemsComplete)
	continuous := r.Field.Type == agree.Continuous
	if !continuous {
		pw := []obj{}
		for _, p := range r.Pairwise {
			s := statObj{}
			s.set("raters", p.Raters[:])
			s.set("n_items", p.N)
			s.stat("percent_agreement", p.PercentAgreement)
			tests := kappas(&s, p.Kappa, p.KappaTest, ordinal)
			if ordinal {
				s.stat("pearson", p.Pearson)
				tests.set("pearson", testJSON(p.PearsonTest))
			}
			s.set("tests", tests)
			pw = append(pw, s.done())
		}
		f.set("pairwise", pw)
		f.stat("fleiss_kappa", r.Fleiss)
		ka := statObj{}
		ka.stat("nominal", r.Alpha.Nominal)
		if ordinal {
			ka.stat("ordinal", r.Alpha.Ordinal)
			ka.stat("interval", r.Alpha.Interval)
		}
		f.set("krippendorff_alpha", ka.done())
		pa := statObj{}
		pa.stat("all_agree_complete_items", r.Percent.AllAgreeComplete)
		pa.stat("pairwise_mean_pairable_items", r.Percent.PairwiseMeanPairable)
		pa.stat("all_agree_pairable_items", r.Percent.AllAgreePairable)
		f.set("percent_agreement", pa.done())
		f.stat("gwet_ac1", r.AC1)
		if ordinal {
			f.stat("gwet_ac2_linear", r.AC2Linear)
			f.stat("gwet_ac2_quadratic", r.AC2Quadratic)
		}
	}
	if r.ICC != nil {
		ic := statObj{}
		for _, e := range iccList(*r.ICC) {
			ic.stat(e.name, e.v)
		}
		f.set("icc", ic.done())
		forms := []obj{}
		for i, e := range iccList(*r.ICC) {
			fm := agree.ICCForms[i]
			t := r.ICC.Tests[i]
			o := statObj{}
			o.set("shrout_fleiss", fm.ShroutFleiss)
			o.set("mcgraw_wong", fm.McGrawWong)
			o.set("model", fm.Model)
			o.stat("value", e.v)
			o.set("n_complete_items", r.ICC.N)
			o.set("test", testJSON(t.Test))
			o.stat("ci95_lo", t.Lo)
			o.stat("ci95_hi", t.Hi)
			forms = append(forms, o.done())
		}
		f.set("icc_forms", forms)
	}
	if len(r.Judges) == 1 {
		f.set("human_vs_auto", judgeJSON(r.Judges[0], r.Field.Type))
	} else if len(r.Judges) > 1 {
		var by obj
		for _, j := range r.Judges {
			by.set(j.Judge, judgeJSON(j, r.Field.Type))
		}
		f.set("human_vs_auto_by_judge", by)
	}
	if len(r.Comparisons) > 0 {
		cs := []obj{}
		for _, c := range r.Comparisons {
			o := obj{}
			o.set("a", c.A)
			o.set("b", c.B)
			o.set("n_items_both", c.NCommon)
			d, tests := statObj{}, obj{}
			for s, name := range agree.CorrNames {
				d.stat(name, c.Diff[s])
				tests.set(name, testJSON(c.Tests[s]))
			}
			o.set("difference", d.done())
			o.set("tests", tests)
			o.set("williams_pearson", testJSON(c.Williams))
			cs = append(cs, o)
		}
		f.set("judge_comparisons", cs)
		f.set("judge_ranking", ranking(r.Judges))
	}
	if r.Bootstrap != nil {
		var bs obj
		for _, iv := range r.Bootstrap {
			s := statObj{}
			s.set("B", iv.B)
			s.set("n_undefined", iv.NUndefined)
			s.set("unit", unitName(iv.Cluster))
			s.set("n_units", iv.Clusters)
			key := "ci95_percentile"
			if iv.Method == agree.CIBCa {
				key = "ci95_bca"
			}
			lo, ok1 := iv.Lo.Float()
			hi, ok2 := iv.Hi.Float()
			if ok1 && ok2 {
				s.set(key, []float64{lo, hi})
			} else {
				s.set(key, nil)
				s.reasons.set(key, iv.Lo.Reason())
			}
			s.stat("se", iv.SE)
			bs.set(iv.Stat, s.done())
		}
		if bs == nil {
			bs = obj{}
		}
		f.set("bootstrap", bs)
	}
	if !continuous {
		f.set("categories_used", categoriesJSON(r.Field, r.CategoriesUsed))
	}
	return f.done()
}

type namedValue struct {
	name string
	v    agree.Value
}

func iccList(c agree.ICC) []namedValue {
	return []namedValue{{"ICC(1,1)", c.ICC11}, {"ICC(2,1)", c.ICC21}, {"ICC(3,1)", c.ICC31},
		{"ICC(1,k)", c.ICC1k}, {"ICC(2,k)", c.ICC2k}, {"ICC(3,k)", c.ICC3k}}
}

func judgeJSON(j agree.VsJudge, typ agree.Type) obj {
	ordinal := typ != agree.Nominal
	s := statObj{}
	s.set("judge", j.Judge)
	s.set("n_items_with_auto", j.NWithAuto)
	if ordinal {
		s.set("n_items_correlation", j.NCorrelation)
		s.set("n_auto_non_numeric", j.NNonNumeric)
		s.stat("pearson", j.Pearson)
		s.stat("spearman", j.Spearman)
		s.stat("kendall_tau_b", j.KendallTauB)
		s.set("tests", corrTestsJSON(j.Tests))
		s.set("kendall_ties", tiesJSON(j.Ties))
	}
	if typ != agree.Continuous {
		s.set("n_items_majority", j.NMajority)
		s.set("n_items_tied_majority", j.NTiedMajority)
		s.set("n_auto_outside_categories", j.NOutsideCategories)
		s.stat("exact_match_accuracy", j.ExactMatch)
		s.set("kappa_tests", kappas(&s, j.Kappa, j.KappaTest, ordinal))
	}
	for _, l := range []struct {
		key string
		c   *agree.LevelCorr
	}{{"system_level", j.SystemLevel}, {"segment_level", j.SegmentLevel}} {
		if l.c == nil {
			continue
		}
		o := statObj{}
		if l.key == "system_level" {
			o.set("n_systems", l.c.N)
		} else {
			o.set("n_segments", l.c.N)
			o.set("n_segments_defined", map[string]int{"pearson": l.c.Defined[0], "spearman": l.c.Defined[1], "kendall_tau_b": l.c.Defined[2]})
		}
		o.stat("pearson", l.c.Pearson)
		o.stat("spearman", l.c.Spearman)
		o.stat("kendall_tau_b", l.c.KendallTauB)
		if l.key == "system_level" {
			o.set("tests", corrTestsJSON(l.c.Tests))
			o.set("kendall_ties", tiesJSON(l.c.Ties))
		}
		s.set(l.key, o.done())
	}
	return s.done()
}

// testJSON writes a test: method, statistic, df, p and adjusted p (null with reasons when
// undefined).
func testJSON(t agree.Test) obj {
	s := statObj{}
	s.set("method", nullIfEmpty(string(t.Method)))
	s.stat("statistic", t.Statistic)
	if t.DF1 != 0 {
		s.set("df1", t.DF1)
	}
	if t.DF2 != 0 {
		s.set("df2", t.DF2)
	}
	s.stat("p", t.P)
	s.stat("p_adjusted", t.PAdjusted)
	return s.done()
}

func corrTestsJSON(t agree.CorrTests) obj {
	return obj{{"pearson", testJSON(t.Pearson)}, {"spearman", testJSON(t.Spearman)}, {"kendall_tau_b", testJSON(t.Kendall)}}
}

func tiesJSON(t agree.KendallTies) obj {
	return obj{{"pairs", t.Pairs}, {"tied_human", t.TiedX}, {"tied_judge", t.TiedY}, {"tied_both", t.TiedXY}}
}

func unitName(cluster string) string {
	if cluster == "" {
		return "item"
	}
	return cluster
}

// ranking orders the judges by each correlation, best first (undefined last, in input
// order); the comparisons say which differences are significant.
func ranking(js []agree.VsJudge) obj {
	out := obj{}
	for s, name := range agree.CorrNames {
		idx := make([]int, len(js))
		for i := range idx {
			idx[i] = i
		}
		val := func(i int) (float64, bool) {
			return [3]agree.Value{js[i].Pearson, js[i].Spearman, js[i].KendallTauB}[s].Float()
		}
		sort.SliceStable(idx, func(a, b int) bool {
			x, okx := val(idx[a])
			y, oky := val(idx[b])
			if okx != oky {
				return okx
			}
			return okx && x > y
		})
		names := make([]string, len(idx))
		for i, j := range idx {
			names[i] = js[j].Judge
		}
		out.set(name, names)
	}
	return out
}

// kappas writes the Cohen's kappas into s (the weighted ones for ordinal fields) and returns
// their tests.
func kappas(s *statObj, k [3]agree.Value, t [3]agree.Test, ordinal bool) obj {
	n := 1
	if ordinal {
		n = 3
	}
	tests := obj{}
	for w := 0; w < n; w++ {
		s.stat(kappaKeys[w], k[w])
		tests.set(kappaKeys[w], testJSON(t[w]))
	}
	return tests
}
