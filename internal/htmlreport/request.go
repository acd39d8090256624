package htmlreport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/m3bench/m3eval/internal/judgerun"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/scoring"
	"github.com/m3bench/m3eval/internal/store"
)

// Format is an output format of m3eval report: --format.
type Format string

// The values of report's --format.
const (
	FormatHTML Format = "html" // the page
	FormatJSON Format = "json" // the page's numbers
)

// Formats are the values of m3eval report's --format (a flag registry completes and checks
// them).
var Formats = []Format{FormatHTML, FormatJSON}

// Request is what m3eval report is asked for: its flags. Options.Judges holds the judges
// named by --judge (none: every judge); Run checks them.
type Request struct {
	Options
	Format  string
	PDF     bool // print the page to PDF
	Metrics bool // compute the rule judge's action-space metrics
	// IllusionLogs are IllusionBench sample logs (LOG or SPLIT=LOG), Testsets NAME=FILE of
	// their test sets; the caller scores them into Options.Illusion.
	IllusionLogs []string
	Testsets     []string
}

// Check checks the flags and how they combine; its errors are usage errors.
func (q *Request) Check() error {
	if f := Format(q.Format); f != FormatHTML && f != FormatJSON {
		return fmt.Errorf("--format %q: use html or json", q.Format)
	}
	if q.PDF && Format(q.Format) != FormatHTML {
		return fmt.Errorf("--pdf prints the HTML page: leave out --format %s", q.Format)
	}
	if err := scoring.CheckBy(q.Bootstrap, q.By); err != nil {
		return err
	}
	if q.Campaign != "" && !q.QC {
		return errors.New("--campaign scopes the quality control: leave out --qc=false")
	}
	if len(q.Testsets) > 0 && len(q.IllusionLogs) == 0 {
		return errors.New("--illusion-testset needs --illusion LOG")
	}
	return nil
}

// Chromium finds the Chromium that prints --pdf; "" without --pdf.
func (q *Request) Chromium() (string, error) {
	if !q.PDF {
		return "", nil
	}
	p, err := FindChromium()
	if err != nil {
		return "", fmt.Errorf("--pdf: %w", err)
	}
	return p, nil
}

// Run checks the judges named in Options.Judges against the store (every judge when none
// is), lists the annotators, builds the rule judge for the metrics and generates the report.
func (q *Request) Run(ctx context.Context, s *store.Store, r *rubric.Rubric) (*Report, error) {
	o := q.Options
	var err error
	if o.Judges, err = scoring.ChooseJudges(ctx, s, q.Judges); err != nil {
		return nil, err
	}
	if o.Annotators, err = s.ExportAnnotators(ctx, store.ExportOptions{}); err != nil {
		return nil, err
	}
	if q.Metrics {
		if o.Judge, err = judgerun.NewJudge(r, ""); err != nil {
			return nil, err
		}
	}
	return Generate(ctx, s, r, o)
}

// Write writes the report in format f: the page, its numbers as JSON, or, when chromium is
// set, the page printed to PDF with it.
func Write(ctx context.Context, w io.Writer, rep *Report, f Format, chromium string) error {
	switch {
	case f == FormatJSON:
		return WriteJSON(w, rep)
	case chromium != "":
		return writePDF(ctx, w, chromium, rep)
	}
	return WriteHTML(w, rep)
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
