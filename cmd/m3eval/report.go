package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/htmlreport"
	"github.com/m3bench/m3eval/internal/illusion"
	"github.com/m3bench/m3eval/internal/judge"
	"github.com/m3bench/m3eval/internal/store"
)

type reportOptions struct {
	judges    []string
	by        string
	illusion  []string
	testsets  []string
	bootstrap int
	seed      uint64
	format    string
	pdf       bool
	output    string
	campaign  string
	qc        bool
	metrics   bool
}

func newReportCmd(g *globalOptions) *cobra.Command {
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report",
		Short: "One self-contained HTML report with charts: campaign, agreement, humans vs judges",
		Long: `report writes one HTML file that opens offline (no CDN, no web font; charts are inline SVG)
and prints to A4: the campaign's progress and active time; the annotators' agreement per
rubric field (forest plot with 95% bootstrap intervals, pairwise kappa heatmaps, label
distributions); every automatic judge against the annotators (correlations per field and per
--by group, confusion heatmaps, item mean vs judge score); the labels per --by group (action
type by default; --by model shows which models resist misleading); the mean rating by turn
position and by number of confusable objects. With --illusion, IllusionBench recall per split
and difficulty. A section without data says in one line why it is left out. Every chart has
the table of its numbers beside it; the statistics are those of m3eval score with the same
--bootstrap, --seed and --by.

--format json writes those numbers instead of the page. --pdf prints the page to PDF
through headless Chromium (chromium on $PATH, or $M3EVAL_CHROMIUM).`,
		Example: `  m3eval report --db team.db -o report.html
  m3eval report --db team.db --judge gpt4o --by model -o report.html
  m3eval report --db team.db --pdf -o report.pdf
  m3eval report --db team.db --format json -o report.json
  m3eval report --illusion-testset Illusion_ICON=icon.parquet --illusion shape.jsonl -o report.html`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runReport(cmd, g, o) },
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.judges, "judge", nil, "compare with this judge only (repeatable; default: every judge)")
	f.StringVar(&o.by, "by", "action_type", "per-group charts by this turn attribute ("+strings.Join(store.GroupKeys(), ", ")+"; \"\" for none)")
	f.StringArrayVar(&o.illusion, "illusion", nil, "IllusionBench sample log (LOG or SPLIT=LOG) to add recall for (repeatable)")
	f.StringArrayVar(&o.testsets, "illusion-testset", nil, "NAME=FILE of the IllusionBench test set of the logs (repeatable)")
	f.IntVar(&o.bootstrap, "bootstrap", 1000, "bootstrap replicates for the 95% intervals (0: none)")
	f.Uint64Var(&o.seed, "seed", 12345, "bootstrap seed; the same seed gives the same intervals as m3eval score")
	f.StringVar(&o.format, "format", "html", "output format: html or json")
	f.BoolVar(&o.pdf, "pdf", false, "print the report to PDF with headless Chromium (-o names the PDF)")
	f.StringVarP(&o.output, "output", "o", "", "write to FILE instead of standard output")
	f.BoolVar(&o.metrics, "metrics", true, "compute the rule judge's action-space metrics (m3eval score --metrics) for their section")
	f.BoolVar(&o.qc, "qc", true, "run m3eval qc's checks (default thresholds) for the quality-control section")
	f.StringVar(&o.campaign, "campaign", "", "quality control of this campaign's annotators on its turns (default: every label)")
	return cmd
}

func runReport(cmd *cobra.Command, g *globalOptions, o *reportOptions) error {
	if o.format != "html" && o.format != "json" {
		return usageErrorf("--format %q: use html or json", o.format)
	}
	if o.pdf && o.format != "html" {
		return usageErrorf("--pdf prints the HTML page: leave out --format %s", o.format)
	}
	if err := checkBootstrapBy(o.bootstrap, o.by); err != nil {
		return err
	}
	if o.campaign != "" && !o.qc {
		return usageErrorf("--campaign scopes the quality control: leave out --qc=false")
	}
	if len(o.testsets) > 0 && len(o.illusion) == 0 {
		return usageErrorf("--illusion-testset needs --illusion LOG")
	}
	chromium := ""
	if o.pdf {
		var err error
		if chromium, err = htmlreport.FindChromium(); err != nil {
			return fmt.Errorf("--pdf: %w", err)
		}
	}
	if err := g.mustExist(); err != nil {
		return err
	}
	r, err := g.loadRubric()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	var ill *illusion.ScoreResult
	if len(o.illusion) > 0 {
		if ill, err = scoreIllusionLogs(ctx, o.testsets, o.illusion, illusion.ScoreOptions{Rule: illusion.RuleM3eval}); err != nil {
			return err
		}
		for _, w := range ill.Warnings {
			fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+w)
		}
	}
	s, err := g.openStore(ctx, nil, store.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	judges, err := chooseJudges(ctx, s, o.judges)
	if err != nil {
		return err
	}
	annotators, err := s.ExportAnnotators(ctx, store.ExportOptions{})
	if err != nil {
		return err
	}
	defer debug.SetGCPercent(debug.SetGCPercent(agree.GCPercent))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(agree.MemoryLimit))

	var j *judge.Judge
	if o.metrics {
		if _, j, err = newJudge(g, ""); err != nil {
			return err
		}
	}
	rep, err := htmlreport.Generate(ctx, s, r, htmlreport.Options{Judge: j, Database: filepath.Base(g.dbPath),
		Judges: judges, Annotators: annotators, By: o.by, Bootstrap: o.bootstrap, Seed: o.seed, Illusion: ill, QC: o.qc, Campaign: o.campaign})
	if err != nil {
		return notFoundHint(err, "m3eval sample --list")
	}
	switch {
	case o.format == "json":
		return writeOutput(cmd, o.output, func(w io.Writer, _ bool) error { return htmlreport.WriteJSON(w, rep) })
	case o.pdf:
		return writePDF(cmd, chromium, o.output, rep)
	}
	return writeOutput(cmd, o.output, func(w io.Writer, _ bool) error { return htmlreport.WriteHTML(w, rep) })
}

// writePDF renders the page into a temporary directory, prints it there and writes the PDF
// out as every -o is written (whole, never over the database).
func writePDF(cmd *cobra.Command, chromium, output string, rep *htmlreport.Report) error {
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
	if err := htmlreport.WriteHTML(f, rep); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	pdf := filepath.Join(dir, "report.pdf")
	if err := htmlreport.PrintPDF(cmd.Context(), chromium, page, pdf); err != nil {
		return err
	}
	in, err := os.Open(pdf)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeOutput(cmd, output, func(w io.Writer, _ bool) error {
		_, err := io.Copy(w, in)
		return err
	})
}
