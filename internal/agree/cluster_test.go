package agree_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/scoring/longform"
)

// clusterRef is testdata/cluster/cluster.json, written by ref_cluster.py there: interval
// widths of a cluster (episode) and an item bootstrap written in Python.
type clusterRef struct {
	B        int
	Estimate map[string]float64
	Cluster  map[string]struct{ Lo, Hi, Width, SE float64 }
	Item     map[string]struct{ Lo, Hi, Width, SE float64 }
}

func readClusters(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, r := range rows[1:] {
		m[r[0]] = r[1]
	}
	return m
}

// TestClusterBootstrapWidthMatchesPython checks the widths of our episode-cluster and item
// bootstrap intervals against the Python bootstrap of the reference script. Both are
// Monte-Carlo (B = 4000 there, 4000 here, other generators): the width of a 95% percentile
// interval has a relative Monte-Carlo error of about 3% at this B, so 12% is a loose bound
// that still tells the cluster width (about 1.7× the item width here) from the item width.
func TestClusterBootstrapWidthMatchesPython(t *testing.T) {
	raw, err := os.ReadFile("testdata/cluster/cluster.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref clusterRef
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	fields, err := longform.Load(longform.Options{Ratings: "testdata/cluster/ratings.csv", Auto: "testdata/cluster/auto.csv"})
	if err != nil {
		t.Fatal(err)
	}
	clusters := readClusters(t, "testdata/cluster/clusters.csv")
	keys := map[string]string{"alpha_interval": "krippendorff_alpha_interval", "pearson": "human_vs_auto_pearson"}
	widths := map[string]map[string]float64{}
	for _, unit := range []string{"cluster", "item"} {
		opt := agree.Options{Bootstrap: ref.B, Seed: 3}
		want := ref.Item
		if unit == "cluster" {
			opt.Clusters, opt.ClusterName = clusters, "episode"
			want = ref.Cluster
		}
		res, err := agree.AnalyzeField(context.Background(), &fields[0], 0, opt)
		if err != nil {
			t.Fatal(err)
		}
		widths[unit] = map[string]float64{}
		for name, key := range keys {
			var iv *agree.Interval
			for i := range res.Bootstrap {
				if res.Bootstrap[i].Stat == key {
					iv = &res.Bootstrap[i]
				}
			}
			if iv == nil {
				t.Fatalf("%s: no interval for %s", unit, key)
			}
			lo, _ := iv.Lo.Float()
			hi, _ := iv.Hi.Float()
			w := hi - lo
			widths[unit][name] = w
			if math.Abs(w-want[name].Width) > 0.12*want[name].Width {
				t.Errorf("%s bootstrap, %s: width %.4f, Python %.4f", unit, name, w, want[name].Width)
			}
			wantClusters := 240
			if unit == "cluster" {
				wantClusters = 40
			}
			if iv.Clusters != wantClusters {
				t.Errorf("%s bootstrap: %d clusters resampled, want %d", unit, iv.Clusters, wantClusters)
			}
		}
		got, _ := res.Alpha.Interval.Float()
		if math.Abs(got-ref.Estimate["alpha_interval"]) > 1e-12 {
			t.Errorf("alpha: %v, Python %v", got, ref.Estimate["alpha_interval"])
		}
	}
	for name := range keys {
		if widths["cluster"][name] < 1.3*widths["item"][name] {
			t.Errorf("%s: the cluster interval (%.4f) should be much wider than the item interval (%.4f)", name, widths["cluster"][name], widths["item"][name])
		}
	}
}

func TestClusterMissingIsAnError(t *testing.T) {
	fields, err := longform.Load(longform.Options{Ratings: "testdata/cluster/ratings.csv"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = agree.AnalyzeField(context.Background(), &fields[0], 0, agree.Options{Bootstrap: 10, Clusters: map[string]string{"e00_t0": "a"}, ClusterName: "episode"})
	if err == nil || !strings.Contains(err.Error(), "item e00_t1 has no episode") {
		t.Fatalf("got %v", err)
	}
}

// twoJudges is the cluster test data with a second judge: the first judge's score plus a
// little noise, so the two are strongly correlated and their difference is small.
func twoJudges(t *testing.T) agree.FieldData {
	t.Helper()
	fields, err := longform.Load(longform.Options{Ratings: "testdata/cluster/ratings.csv", Auto: "testdata/cluster/auto.csv"})
	if err != nil {
		t.Fatal(err)
	}
	d := fields[0]
	a := d.Judges[0]
	a.Name = "a"
	b := agree.NewJudge("b", len(d.Items))
	for i := range d.Items {
		b.Present[i] = a.Present[i]
		b.Num[i] = a.Num[i] + 0.3*math.Sin(float64(i)*12.9898)
	}
	d.Judges = []agree.Judge{a, b}
	return d
}

// TestJudgeComparisonIsPaired: the difference is the difference of the two correlations;
// its paired interval is far narrower than the two judges' own intervals would allow if
// they were resampled apart (their half-widths add up), and Williams' t is reported.
func TestJudgeComparisonIsPaired(t *testing.T) {
	d := twoJudges(t)
	res, err := agree.AnalyzeField(context.Background(), &d, 0, agree.Options{Bootstrap: 2000, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Comparisons) != 1 {
		t.Fatalf("%d comparisons", len(res.Comparisons))
	}
	c := res.Comparisons[0]
	ra, _ := res.Judges[0].Pearson.Float()
	rb, _ := res.Judges[1].Pearson.Float()
	if diff, _ := c.Diff[0].Float(); math.Abs(diff-(ra-rb)) > 1e-15 {
		t.Errorf("difference %v, want %v", diff, ra-rb)
	}
	width := func(iv *agree.Interval) float64 {
		lo, _ := iv.Lo.Float()
		hi, _ := iv.Hi.Float()
		return hi - lo
	}
	var wa, wb float64
	for i := range res.Bootstrap {
		switch res.Bootstrap[i].Stat {
		case "human_vs_auto_a_pearson":
			wa = width(&res.Bootstrap[i])
		case "human_vs_auto_b_pearson":
			wb = width(&res.Bootstrap[i])
		}
	}
	if c.CI[0] == nil || wa == 0 || wb == 0 {
		t.Fatal("intervals missing")
	}
	if wd := width(c.CI[0]); wd > 0.5*math.Sqrt(wa*wa+wb*wb) {
		t.Errorf("paired difference interval %.4f is not much narrower than unpaired %.4f", wd, math.Sqrt(wa*wa+wb*wb))
	}
	if c.Williams.Method != agree.MethodWilliams || !c.Williams.P.OK() || c.NCommon != len(d.Items) {
		t.Errorf("Williams: %+v over %d items", c.Williams, c.NCommon)
	}
	if c.Tests[1].Method != agree.MethodBootstrap || !c.Tests[1].P.OK() {
		t.Errorf("Spearman difference test: %+v", c.Tests[1])
	}
}

func TestExchangeableRaters(t *testing.T) {
	d := twoJudges(t)
	res, err := agree.AnalyzeField(context.Background(), &d, 0, agree.Options{Exchangeable: true, Bootstrap: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pairwise) != 0 || res.ICC.ICC21.OK() || res.ICC.ICC3k.OK() || !res.ICC.ICC11.OK() || !res.ICC.ICC1k.OK() || !res.Fleiss.OK() {
		t.Errorf("exchangeable: pairwise %d, ICC %+v", len(res.Pairwise), res.ICC)
	}
	for _, iv := range res.Bootstrap {
		if strings.HasPrefix(iv.Stat, "pairwise") || iv.Stat == "icc_ICC(2,1)" {
			t.Errorf("exchangeable raters: %s bootstrapped", iv.Stat)
		}
	}
}

// TestBCaThroughAnalyze: BCa intervals (with the episode jackknife) are defined, marked as
// BCa, and close to the percentile ones on this nearly symmetric statistic.
func TestBCaThroughAnalyze(t *testing.T) {
	d := twoJudges(t)
	clusters := readClusters(t, "testdata/cluster/clusters.csv")
	run := func(ci agree.CIMethod) agree.Interval {
		res, err := agree.AnalyzeField(context.Background(), &d, 0, agree.Options{Bootstrap: 2000, Seed: 4, CI: ci, Clusters: clusters, ClusterName: "episode"})
		if err != nil {
			t.Fatal(err)
		}
		return res.Bootstrap[0] // krippendorff_alpha_nominal
	}
	p, b := run(agree.CIPercentile), run(agree.CIBCa)
	if b.Method != agree.CIBCa || !b.Lo.OK() || !b.Hi.OK() {
		t.Fatalf("BCa interval: %+v", b)
	}
	pl, _ := p.Lo.Float()
	bl, _ := b.Lo.Float()
	se, _ := p.SE.Float()
	if math.Abs(pl-bl) > se {
		t.Errorf("BCa lower end %.4f far from percentile %.4f (se %.4f)", bl, pl, se)
	}
}
