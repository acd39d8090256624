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
	"github.com/m3bench/m3eval/internal/agree/longform"
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
