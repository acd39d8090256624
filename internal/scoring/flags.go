package scoring

import (
	"io"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/render"
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
// order their error messages list them (their flags are declared with them: cmdutil.EnumVar).
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
	Format    render.Format
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
	cmdutil.Check(fs, "bootstrap", func() error { return CheckBootstrap(f.Bootstrap) })
	fs.Uint64Var(&f.Seed, "seed", 12345, "bootstrap seed; the same seed gives the same intervals on any machine")
	cmdutil.EnumVar(fs, &f.CI, "ci", string(agree.CIPercentile), cmdutil.Strings(CIMethods...), "bootstrap interval")
	cmdutil.EnumVar(fs, &f.Adjust, "adjust", string(agree.AdjustNone), cmdutil.Strings(Adjustments...), "adjust p-values over the whole report")
	cmdutil.EnumVar(fs, &f.Raters, "raters", string(RatersDistinct), cmdutil.Strings(RaterModes...), "distinct (each rater is one person) or exchangeable (raters are interchangeable slots: no pairwise or two-way ICC statistics)")
	cmdutil.EnumVar(fs, &f.Format, "format", render.Table, Formats, "output format")
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

// Check turns the values into the options; they were checked when they were parsed
// (cmdutil.EnumVar, cmdutil.Check), and no rule involves two of them.
func (f StatFlags) Check() (Stats, error) {
	var s Stats
	ci := agree.CIMethod(f.CI)
	s.Analysis = agree.Options{Bootstrap: f.Bootstrap, Seed: f.Seed, CI: ci, Exchangeable: Raters(f.Raters) == RatersExchangeable}
	s.Adjust = agree.Adjustment(f.Adjust)
	s.Report = render.AgreementOptions{Format: f.Format, Bootstrap: f.Bootstrap, CI: ci, Adjust: s.Adjust,
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

// CheckBootstrap is the rule of the --bootstrap flag m3eval score, agree and report share
// (cmdutil.Check runs it when the flag is parsed).
func CheckBootstrap(bootstrap int) error {
	if bootstrap < 0 {
		return usage.Errorf("--bootstrap %d: the number of replicates cannot be negative", bootstrap)
	}
	return nil
}
