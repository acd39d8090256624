package report

import (
	"time"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/estimate"
	"github.com/m3bench/m3eval/internal/illusion"
	"github.com/m3bench/m3eval/internal/render"
)

// Data is everything the report draws, as plain values. A nil part leaves its section out
// with one line saying why.
type Data struct {
	Title  string
	Inputs []KV

	Campaign *Campaign
	Score    *ScoreData
	Trends   *Trends
	Metrics  *MetricsData
	// MetricsLeftOut says why Metrics is nil when the rubric cannot support them.
	MetricsLeftOut string
	QC             *QCData
	Illusion       *IllusionData
	// ModelScores is m3eval estimate for the report's first judge (nil without a judge).
	ModelScores *estimate.Result
}

// ScoreData is what m3eval score computes, with the inputs of the overall block kept for
// the charts that need the ratings themselves (label distributions, confusion, scatter).
type ScoreData struct {
	By        string   // the grouping attribute of Groups ("" without)
	Judges    []string // judges compared, in order
	Bootstrap int      // replicates behind the intervals (0: none)
	Overall   []agree.FieldResult
	// Data holds the overall block's ratings per field, aligned with Overall.
	Data   []agree.FieldData
	Groups []render.Section // one per value of By
	// GroupData holds each group's ratings per field, aligned with Groups.
	GroupData [][]agree.FieldData
}

// Campaign is the annotation campaign's state.
type Campaign struct {
	Turns, Episodes int
	Annotators      []AnnotatorProgress
	// ActiveSeconds is the active time of every done annotation, in seconds.
	ActiveSeconds []float64
}

// AnnotatorProgress is one annotator's counts and submission times.
type AnnotatorProgress struct {
	Name                          string
	Done, Draft, Flagged, Skipped int
	// Submitted holds the submission times of the done annotations, oldest first.
	Submitted []time.Time
}

// IllusionData is IllusionBench recall per split and difficulty (m3eval illusion score).
type IllusionData struct {
	Rows     []illusion.Row
	Warnings []string
}
