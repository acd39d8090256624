package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
)

// Build turns the data into the report: the sections in reading order, each from its own
// small function, so that new data (action-space metrics, QC) adds a function, not a branch.
func Build(d *Data) *Report {
	return &Report{
		Title:  d.Title,
		Inputs: d.Inputs,
		Sections: []Section{
			campaignSection(d.Campaign),
			agreementSection(d.Score),
			judgesSection(d.Score),
			modelScoresSection(d.ModelScores),
			groupsSection(d.Score),
			trendsSection(d.Trends),
			metricsSection(d.Metrics, d.MetricsLeftOut),
			qcSection(d.QC),
			illusionSection(d.Illusion),
		},
	}
}

//go:embed report.html.tmpl
var pageTemplate string

var page = template.Must(template.New("report").Parse(pageTemplate))

// WriteHTML writes the report as one self-contained HTML page. html/template escapes every
// text that comes from data.
func WriteHTML(w io.Writer, r *Report) error {
	if err := page.Execute(w, r); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	return nil
}

// WriteJSON writes the numbers of every chart: the report without its drawings.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	enc.SetEscapeHTML(false)
	var top struct {
		M3eval string `json:"m3eval"`
		*Report
	}
	top.M3eval, top.Report = "report 1", r
	return enc.Encode(top)
}
