package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/cmdstore"
	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/illusion"
	"github.com/m3bench/m3eval/internal/intervalcache"
	"github.com/m3bench/m3eval/internal/judge"
	"github.com/m3bench/m3eval/internal/judgerun"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/scoring"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/usage"
)

// Formats are the values of m3eval report's --format (declared with them): the page, or the
// page's numbers.
var Formats = []render.Format{render.HTML, render.JSON}

// Request is what m3eval report is asked for: its flags. Options.Judges holds the judges
// named by --judge (none: every judge); Run checks them.
type Request struct {
	Options
	Format  render.Format
	PDF     bool   // print the page to PDF
	Metrics bool   // compute the rule judge's action-space metrics
	NoCache bool   // neither read nor write the interval cache
	Output  string // -o: the file to write ("" or "-": standard output)
	// IllusionLogs are IllusionBench sample logs (LOG or SPLIT=LOG), Testsets NAME=FILE of
	// their test sets; Run scores them (scoreIllusion) into Options.Illusion.
	IllusionLogs []string
	Testsets     []string

	chromium string // the Chromium that prints --pdf (findChromium)
	// Notes are one-line remarks for the terminal (what the report left out and why).
	Notes []string
	// ByFromData: --by was not given, so the grouping is the first attribute whose turns
	// take two or more values (action_type, model, task_type), not a single "unknown" group.
	// Run reads it off the flag set AddFlags defined.
	ByFromData bool

	flags *pflag.FlagSet // the flag set AddFlags defined the flags on (nil: none)
}

// AddFlags defines the flags of m3eval report on fs, and keeps fs to ask which were given.
func (q *Request) AddFlags(fs *pflag.FlagSet) {
	q.flags = fs
	fs.StringVarP(&q.Output, "output", "o", "", "write to FILE instead of standard output")
	fs.StringArrayVar(&q.Judges, "judge", nil, "compare with this judge only (repeatable; default: every judge)")
	cmdutil.EnumVar(fs, &q.By, "by", "action_type", append(store.GroupKeys(), ""), "per-group charts by this turn attribute (\"\" for none)")
	fs.StringArrayVar(&q.IllusionLogs, "illusion", nil, "IllusionBench sample log (LOG or SPLIT=LOG) to add recall for (repeatable)")
	fs.StringArrayVar(&q.Testsets, "illusion-testset", nil, "NAME=FILE of the IllusionBench test set of the logs (repeatable)")
	fs.IntVar(&q.Bootstrap, "bootstrap", 1000, "bootstrap replicates for the 95% intervals (0: none)")
	cmdutil.Check(fs, "bootstrap", func() error { return scoring.CheckBootstrap(q.Bootstrap) })
	fs.Uint64Var(&q.Seed, "seed", 12345, "bootstrap seed; the same seed gives the same intervals as m3eval score")
	cmdutil.EnumVar(fs, &q.Format, "format", render.HTML, Formats, "output format")
	fs.BoolVar(&q.PDF, "pdf", false, "print the report to PDF with headless Chromium: $M3EVAL_CHROMIUM, or chromium on $PATH (-o names the PDF)")
	fs.BoolVar(&q.NoCache, "no-cache", false, "resample even when the interval cache holds these intervals, and store none (cache: $"+intervalcache.EnvDir+", default m3eval/intervals in the user's cache directory; docs/report.md)")
	fs.BoolVar(&q.Metrics, "metrics", true, "compute the rule judge's action-space metrics (m3eval score --metrics) for their section")
	fs.BoolVar(&q.QC, "qc", true, "run m3eval qc's checks (default thresholds) for the quality-control section")
	fs.StringVar(&q.Campaign, "campaign", "", "quality control of this campaign's annotators on its turns (default: every label)")
}

// Check checks how the flags combine (each flag's own value was checked when parsed); its
// errors are marked usage.Err.
func (q *Request) Check() error {
	if q.PDF && q.Format != render.HTML {
		return usage.Errorf("--pdf prints the HTML page: leave out --format %s", q.Format)
	}
	if q.Campaign != "" && !q.QC {
		return usage.Errorf("--campaign scopes the quality control: leave out --qc=false")
	}
	if len(q.Testsets) > 0 && len(q.IllusionLogs) == 0 {
		return usage.Errorf("--illusion-testset needs --illusion LOG")
	}
	return nil
}

// findChromium finds the Chromium that prints --pdf (nothing to find without --pdf).
func (q *Request) findChromium() error {
	if !q.PDF {
		return nil
	}
	var err error
	if q.chromium, err = FindChromium(); err != nil {
		return fmt.Errorf("--pdf: %w", err)
	}
	return nil
}

// scoreIllusion scores the IllusionBench logs of --illusion into Options.Illusion and
// writes its warnings to errw. Run calls it before the database opens, so that a bad
// log changes nothing; its errors of the command line are marked usage.Err.
func (q *Request) scoreIllusion(ctx context.Context, errw io.Writer) error {
	if len(q.IllusionLogs) == 0 {
		return nil
	}
	var err error
	if q.Illusion, err = illusion.ScoreFiles(ctx, q.Testsets, q.IllusionLogs, illusion.ScoreOptions{Rule: illusion.RuleM3eval}); err != nil {
		return err
	}
	for _, w := range q.Illusion.Warnings {
		fmt.Fprintln(errw, "warning: "+w)
	}
	return nil
}

// Run is m3eval report once its flags are parsed (docs/architecture.md, "How a command is
// wired"): it checks the request, finds Chromium for --pdf and scores the IllusionBench logs
// (their warnings on e's standard error) before the database opens, so that a bad flag or
// log changes nothing; then it builds the report (Build), writes its notes to standard error
// and the report to e's output or -o. Errors of the command line are marked usage.Err; a
// sample or campaign the database lacks says where to look.
func (q *Request) Run(ctx context.Context, e *cmdio.IO) error {
	if err := q.Check(); err != nil {
		return err
	}
	if err := q.findChromium(); err != nil {
		return err
	}
	if err := cmdstore.MustExist(e); err != nil {
		return err
	}
	r, err := e.LoadRubric()
	if err != nil {
		return err
	}
	if err := q.scoreIllusion(ctx, e.Stderr()); err != nil {
		return err
	}
	s, err := cmdstore.OpenStore(ctx, e, nil, store.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	if q.flags != nil {
		q.ByFromData = !q.flags.Changed("by")
	}
	rep, err := q.Build(ctx, s, r)
	if errors.Is(err, store.ErrNotFound) {
		return errors.New(err.Error() + " (see m3eval sample --list)")
	}
	if err != nil {
		return err
	}
	for _, n := range q.Notes {
		fmt.Fprintln(e.Stderr(), n)
	}
	return e.Write(q.Output, string(q.Format), q.writer(ctx, rep))
}

// Build checks the judges named in Options.Judges against the store (every judge when none
// is), lists the annotators, builds the rule judge for the metrics and generates the report,
// with the collector settings of agree.TuneGC.
func (q *Request) Build(ctx context.Context, s *store.Store, r *rubric.Rubric) (*Report, error) {
	defer agree.TuneGC()()
	o := q.Options
	if o.Database == "" {
		o.Database = store.BaseName(s.Path()) // a PostgreSQL address: its database and schema, no password
	}
	var err error
	if o.Judges, err = scoring.ChooseJudges(ctx, s, q.Judges); err != nil {
		return nil, err
	}
	if o.Annotators, err = s.ExportAnnotators(ctx, store.ExportOptions{}); err != nil {
		return nil, err
	}
	o.Cache = scoring.OpenCache(q.NoCache)
	if q.ByFromData {
		if o.By, err = groupingFromData(ctx, s); err != nil {
			return nil, err
		}
		if o.By != q.By {
			what := "no grouping"
			if o.By != "" {
				what = "grouped by " + o.By
			}
			q.Notes = append(q.Notes, fmt.Sprintf("report: %s: every turn has one %s (--by chooses)", what, q.By))
		}
	}
	if q.Metrics {
		if o.Judge, err = judgerun.NewJudge(r, ""); errors.Is(err, judge.ErrRules) {
			// A rubric of its own (one score, a preference) has not the fields the rule
			// judge fills: the report leaves its metrics out and says so, instead of failing.
			o.Judge = nil
			o.MetricsLeftOut = fmt.Sprintf("Left out: the rubric %s has not the fields the rule judge's action-space metrics need (%v).", r.Name, err)
			q.Notes = append(q.Notes, fmt.Sprintf("report: action-space metrics left out: the rubric %s has not the fields they need", r.Name))
		} else if err != nil {
			return nil, err
		}
	}
	return Generate(ctx, s, r, o)
}

// writer returns the function that writes the report as asked: the page, its numbers as
// JSON, or the page printed to PDF (color is not used).
func (q *Request) writer(ctx context.Context, rep *Report) func(w io.Writer, color bool) error {
	return func(w io.Writer, _ bool) error {
		switch {
		case q.Format == render.JSON:
			return WriteJSON(w, rep)
		case q.PDF:
			return writePDF(ctx, w, q.chromium, rep)
		}
		return WriteHTML(w, rep)
	}
}

// writePDF renders the print version of the page into a temporary directory, prints it
// there and copies the PDF to w.
func writePDF(ctx context.Context, w io.Writer, chromium string, rep *Report) error {
	dir, err := os.MkdirTemp("", "m3eval-report-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		return err
	}
	rep.Print = true
	if err := WriteHTML(f, rep); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	pdf := filepath.Join(dir, "report.pdf")
	if err := PrintPDF(ctx, chromium, page, pdf); err != nil {
		return err
	}
	in, err := os.Open(pdf)
	if err != nil {
		return err
	}
	defer in.Close()
	_, err = io.Copy(w, in)
	return err
}

// groupingFromData is the first attribute whose turns take two or more values: logs from
// other tools have no action type (all "unknown"), and one group of everything says nothing.
func groupingFromData(ctx context.Context, s *store.Store) (string, error) {
	for _, key := range []string{"action_type", "model", "task_type"} {
		counts, err := s.SampleStrata(ctx, store.SampleParams{By: []string{key}})
		if err != nil {
			return "", err
		}
		if len(counts) >= 2 {
			return key, nil
		}
	}
	return "", nil
}
