package scoring

import (
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/usage"
)

// Raters says who the annotators (agree's rater columns) are: --raters.
type Raters string

// The values of --raters.
const (
	// RatersDistinct: each rater is one person, so pairwise and two-way ICC statistics exist.
	RatersDistinct Raters = "distinct"
	// RatersExchangeable: raters are interchangeable slots (one-way statistics only).
	RatersExchangeable Raters = "exchangeable"
)

// Cluster is the unit the bootstrap of m3eval score resamples: --cluster.
type Cluster string

// The values of score's --cluster.
const (
	ClusterEpisode Cluster = "episode" // whole conversations (the default)
	ClusterTurn    Cluster = "turn"    // single turns
	ClusterModel   Cluster = "model"   // everything one model answered
)

// The valid values of the enumerated statistics flags of m3eval score and agree, in the
// order their error messages list them (a flag registry completes and checks them).
var (
	// Formats are the values of --format.
	Formats = []render.Format{render.Table, render.JSON, render.Markdown, render.CSV, render.LaTeX}
	// CIMethods are the values of --ci.
	CIMethods = []agree.CIMethod{agree.CIPercentile, agree.CIBCa}
	// Adjustments are the values of --adjust.
	Adjustments = []agree.Adjustment{agree.AdjustHolm, agree.AdjustBH, agree.AdjustNone}
	// RaterModes are the values of --raters.
	RaterModes = []Raters{RatersDistinct, RatersExchangeable}
	// Clusters are the values of score's --cluster.
	Clusters = []Cluster{ClusterEpisode, ClusterTurn, ClusterModel}
)

// StatFlags are the statistics and output flags m3eval agree and score share, as given.
type StatFlags struct {
	Format    string
	Bootstrap int
	Seed      uint64
	CI        string
	Adjust    string
	Raters    string
	Matrix    string            // one statistic as a judge × field matrix
	CSV       render.CSVOptions // --raw, --excel
	Output    string            // -o: the file to write ("" or "-": standard output; the caller defines -o)
}

// AddFlags defines the statistics and CSV flags m3eval agree and score share on fs.
func (f *StatFlags) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&f.Bootstrap, "bootstrap", 0, "bootstrap replicates for 95% intervals and standard errors (0: none)")
	fs.Uint64Var(&f.Seed, "seed", 12345, "bootstrap seed; the same seed gives the same intervals on any machine")
	fs.StringVar(&f.CI, "ci", string(agree.CIPercentile), "bootstrap interval: "+orList(CIMethods))
	fs.StringVar(&f.Adjust, "adjust", string(agree.AdjustNone), "adjust p-values over the whole report: "+orList(Adjustments))
	fs.StringVar(&f.Raters, "raters", string(RatersDistinct), "distinct (each rater is one person) or exchangeable (raters are interchangeable slots: no pairwise or two-way ICC statistics)")
	fs.StringVar(&f.Format, "format", string(render.Table), "output format: "+orList(Formats))
	fs.StringVar(&f.Matrix, "matrix", "", "print one statistic as a judge × field matrix, e.g. kendall_tau_b (or, with agree --levels, system_level.kendall_tau_b)")
	f.CSV.AddFlags(fs)
}

// Stats are StatFlags checked and turned into the options of the analysis and the report.
type Stats struct {
	Analysis agree.Options
	Adjust   agree.Adjustment
	Report   render.AgreementOptions
	flags    StatFlags
}

// Check checks the values; an error names the flag and its valid values (marked usage.Err).
func (f StatFlags) Check() (Stats, error) {
	var s Stats
	if err := oneOf("format", render.Format(f.Format), Formats); err != nil {
		return s, err
	}
	if f.Bootstrap < 0 {
		return s, usage.Errorf("--bootstrap %d: the number of replicates cannot be negative", f.Bootstrap)
	}
	if err := oneOf("ci", agree.CIMethod(f.CI), CIMethods); err != nil {
		return s, err
	}
	if err := oneOf("adjust", agree.Adjustment(f.Adjust), Adjustments); err != nil {
		return s, err
	}
	if err := oneOf("raters", Raters(f.Raters), RaterModes); err != nil {
		return s, err
	}
	ci := agree.CIMethod(f.CI)
	s.Analysis = agree.Options{Bootstrap: f.Bootstrap, Seed: f.Seed, CI: ci, Exchangeable: Raters(f.Raters) == RatersExchangeable}
	s.Adjust = agree.Adjustment(f.Adjust)
	s.Report = render.AgreementOptions{Format: render.Format(f.Format), Bootstrap: f.Bootstrap, CI: ci, Adjust: s.Adjust,
		Matrix: f.Matrix, CSV: f.CSV}
	s.flags = f
	return s, nil
}

// Writer returns the function that writes m3eval agree's results: the report's options
// with the inputs in (the files read), the statistics flags recorded in them, and cluster
// naming the resampled unit ("": items).
func (s Stats) Writer(results []agree.FieldResult, in render.AgreementInputs, cluster string) func(w io.Writer, color bool) error {
	o := s.Report
	in.Bootstrap, in.Seed, in.CI, in.Adjust, in.Raters = s.flags.Bootstrap, s.flags.Seed, s.flags.CI, s.flags.Adjust, s.flags.Raters
	o.Cluster, in.Cluster = cluster, cluster
	o.Inputs = in
	return func(w io.Writer, color bool) error {
		o.Color = color
		return render.WriteAgreement(w, results, o)
	}
}

// CheckBy checks the --bootstrap and --by flags m3eval score and report share.
func CheckBy(bootstrap int, by string) error {
	if bootstrap < 0 {
		return usage.Errorf("--bootstrap %d: the number of replicates cannot be negative", bootstrap)
	}
	if by != "" && !slices.Contains(store.GroupKeys(), by) {
		return usage.Errorf("--by %q: use one of %s", by, strings.Join(store.GroupKeys(), ", "))
	}
	return nil
}

// oneOf fails unless v is one of valid, naming the flag and listing them: "use a, b or c".
func oneOf[T ~string](flag string, v T, valid []T) error {
	if slices.Contains(valid, v) {
		return nil
	}
	return usage.Errorf("--%s %q: use %s", flag, string(v), orList(valid))
}

// orList lists values for a message: "a", "a or b", "a, b or c".
func orList[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
