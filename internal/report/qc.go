package report

import (
	"fmt"
	"math"
	"slices"
)

// QCData is the campaign's quality control (m3eval qc): one row per annotator.
type QCData struct {
	Scope      string // the campaign checked, or "all labels"
	Annotators []QCAnnotator
}

// QCAnnotator is one annotator's checks.
type QCAnnotator struct {
	Name                                      string
	Items, Rushed, GoldAnswers, RepeatAnswers int
	MissingComments                           int
	MedianSeconds                             float64
	GoldAccuracy, IntraAgreement              float64 // NaN: no gold or repeated item answered
	Flags                                     []QCFlag
}

// QCFlag is one problem a check found, with its one-line reason.
type QCFlag struct {
	Check, Field, Reason string
}

// qcSection: gold accuracy, intra-annotator agreement and the flags of every check.
func qcSection(q *QCData) Section {
	const id, title = "qc", "Quality control"
	if q == nil {
		return omitted(id, title, "Left out: quality control not asked for (--qc=false).")
	}
	if len(q.Annotators) == 0 {
		return omitted(id, title, "Left out: no submitted label to check in "+q.Scope+".")
	}
	sec := Section{ID: id, Title: title, Intro: "The checks of m3eval qc on " + q.Scope + " (default thresholds): answers on gold items and on items shown twice, rushing, straight-lining, missing comments, outliers, and every flag raised."}
	ch := Chart{ID: "qc-accuracy", Title: "Gold accuracy and repeat agreement per annotator",
		Table: Table{Columns: []string{"annotator", "items", "gold answers", "gold accuracy", "repeated answers", "repeat agreement", "rushed", "median active (s)", "missing comments", "flags"}}}
	names := make([]string, len(q.Annotators))
	gold := make([]interval, len(q.Annotators))
	intra := make([]interval, len(q.Annotators))
	any := false
	for i, a := range q.Annotators {
		names[i] = cleanLabel(a.Name)
		gold[i] = interval{Y: float64(i), Est: a.GoldAccuracy, Lo: math.NaN(), Hi: math.NaN()}
		intra[i] = interval{Y: float64(i), Est: a.IntraAgreement, Lo: math.NaN(), Hi: math.NaN()}
		any = any || !math.IsNaN(a.GoldAccuracy) || !math.IsNaN(a.IntraAgreement)
		ch.Table.add(Text(a.Name), Int(a.Items), Int(a.GoldAnswers), Num(a.GoldAccuracy), Int(a.RepeatAnswers), Num(a.IntraAgreement),
			Int(a.Rushed), Num(a.MedianSeconds), Int(a.MissingComments), Int(len(a.Flags)))
	}
	if any {
		ch.Caption = fmt.Sprintf("Share of matching answers (0–1) on gold items and on items the annotator saw twice; one marker shape per check; %d annotators.", len(q.Annotators))
		ch.SVG = forestPlot(ch.Title, "share of matching answers", names, []string{"gold accuracy", "repeat agreement"}, [][]interval{gold, intra}, 0, 1)
	} else {
		ch.Note = "No annotator has answered a gold or a repeated item yet."
	}
	sec.Charts = append(sec.Charts, ch, flagsChart(q))
	return sec
}

// flagsChart: how many flags each check raised for each annotator, and every reason.
func flagsChart(q *QCData) Chart {
	ch := Chart{ID: "qc-flags", Title: "Flags per annotator and check",
		Table: Table{Columns: []string{"annotator", "check", "field", "reason"}}}
	var checks []string
	for _, a := range q.Annotators {
		for _, f := range a.Flags {
			if !slices.Contains(checks, f.Check) {
				checks = append(checks, f.Check)
			}
			ch.Table.add(Text(a.Name), Text(f.Check), Text(f.Field), Text(f.Reason))
		}
	}
	if len(checks) == 0 {
		ch.Note = "No check raised a flag."
		return ch
	}
	slices.Sort(checks)
	counts := make([][]int, len(q.Annotators))
	most := 1
	names := make([]string, len(q.Annotators))
	for i, a := range q.Annotators {
		names[i] = cleanLabel(a.Name)
		counts[i] = make([]int, len(checks))
		for _, f := range a.Flags {
			counts[i][slices.Index(checks, f.Check)]++
			most = max(most, counts[i][slices.Index(checks, f.Check)])
		}
	}
	ch.Caption = fmt.Sprintf("Number of flags per annotator (rows) and check (columns), darker is more; %d flags in all; the reasons are in the table.", len(ch.Table.Rows))
	ch.SVG = heatmap(ch.Title, "check", "annotator", names, checks,
		func(r, c int) float64 { return float64(counts[r][c]) / float64(most) },
		func(r, c int) string { return fmt.Sprint(counts[r][c]) })
	return ch
}
