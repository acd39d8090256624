package cmdutil

import (
	"github.com/m3bench/m3eval/internal/estimate"
	"github.com/m3bench/m3eval/internal/illusion"
	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/judgerun"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/report"
	"github.com/m3bench/m3eval/internal/scoring"
	"github.com/m3bench/m3eval/internal/scoring/longform"
	"github.com/m3bench/m3eval/internal/simulate"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/workflow"
	"github.com/m3bench/m3eval/tui"
)

// Registry is the one table of what m3eval's flags accept and how the shell completes them
// (applied by ApplyFlags to the command tree): Values are checked when the flag is parsed, an
// unknown one being a usage error that lists them; Suggest, Keys and From (the database named
// by --db) only complete. The lists come from the packages that define the values.
func Registry() []Flag {
	s := func(v ...string) []string { return v }
	stat, ci, adjust := Strings(scoring.Formats...), Strings(scoring.CIMethods...), Strings(scoring.Adjustments...)
	raters, kinds := Strings(scoring.RaterModes...), Strings(illusion.Kinds...)
	const annotators, judges, ids, campaigns = store.CompleteAnnotators, store.CompleteJudges, store.CompleteSampleIDs, store.CompleteCampaigns
	return []Flag{
		{Command: "import", Name: "from", Values: Strings(ingest.Formats...)},
		{Command: "import", Name: "annotator", From: annotators},
		// --graphics and --theme share their check with $M3EVAL_GRAPHICS and $M3EVAL_THEME,
		// which the TUI makes (its message names the values): here they are only completed.
		{Command: "annotate", Name: "graphics", Suggest: s(tui.GraphicsKitty, tui.GraphicsITerm, tui.GraphicsSixel, tui.GraphicsNone, tui.GraphicsAuto)},
		{Command: "annotate", Name: "theme", Suggest: s(tui.ThemeDark, tui.ThemeLight, tui.ThemeAuto)},
		{Command: "annotate", Name: "filter", Keys: store.FilterKeys()},
		{Command: "annotate", Name: "annotator", From: annotators},
		{Command: "annotate", Name: "start", From: ids},
		{Command: "annotate", Name: "campaign", From: campaigns},
		{Command: "export", Name: "format", Values: Strings(render.LabeledFormats...)},
		{Command: "export", Name: "annotator", From: annotators},
		{Command: "export", Name: "campaign", From: campaigns},
		{Command: "sample", Name: "format", Values: Strings(workflow.Formats...)},
		{Command: "sample", Name: "by", Suggest: store.SampleKeys()},
		{Command: "sample", Name: "where", Keys: store.SampleKeys()},
		{Command: "sample", Name: "show", From: store.CompleteSamples},
		{Command: "assign", Name: "format", Values: Strings(workflow.Formats...)},
		{Command: "assign", Name: "sample", From: store.CompleteSamples},
		{Command: "qc", Name: "format", Values: Strings(workflow.QCFormats...)},
		{Command: "qc", Name: "campaign", From: campaigns},
		{Command: "adjudicate", Name: "format", Values: Strings(workflow.Formats...)},
		{Command: "adjudicate", Name: "campaign", From: campaigns},
		{Command: "adjudicate", Name: "take", From: annotators},
		{Command: "adjudicate", Name: "turn", From: ids},
		{Command: "judge", Name: "format", Values: Strings(judgerun.ExplainFormats...)},
		{Command: "judge", Name: "filter", Keys: store.TurnFilterKeys()},
		{Command: "judge", Name: "name", From: judges},
		{Command: "judge", Name: "explain", From: ids},
		{Command: "import-scores", Name: "judge", From: judges},
		{Command: "score", Name: "format", Values: stat},
		{Command: "score", Name: "by", Values: store.GroupKeys()},
		{Command: "score", Name: "cluster", Values: Strings(scoring.Clusters...)},
		{Command: "score", Name: "ci", Values: ci},
		{Command: "score", Name: "adjust", Values: adjust},
		{Command: "score", Name: "raters", Values: raters},
		{Command: "score", Name: "judge", From: judges},
		{Command: "score", Name: "annotator", From: annotators},
		{Command: "estimate", Name: "format", Values: Strings(render.EstimateFormats...)},
		{Command: "estimate", Name: "by", Values: estimate.GroupKeys()},
		{Command: "estimate", Name: "judge", From: judges},
		{Command: "estimate", Name: "annotator", From: annotators},
		{Command: "estimate", Name: "sample", From: store.CompleteSamples},
		{Command: "sample", Name: "judge", From: judges},
		{Command: "agree", Name: "format", Values: stat},
		{Command: "agree", Name: "cluster", Values: Strings(longform.ClusterColumns...)},
		{Command: "agree", Name: "ci", Values: ci},
		{Command: "agree", Name: "adjust", Values: adjust},
		{Command: "agree", Name: "raters", Values: raters},
		{Command: "agree", Name: "mean", Values: Strings(longform.Means...)},
		{Command: "report", Name: "format", Values: Strings(report.Formats...)},
		{Command: "report", Name: "by", Values: append(store.GroupKeys(), "")},
		{Command: "report", Name: "judge", From: judges},
		{Command: "report", Name: "campaign", From: campaigns},
		{Command: "illusion score", Name: "kind", Values: kinds},
		{Command: "illusion score", Name: "by", Values: kinds},
		{Command: "illusion score", Name: "format", Values: Strings(render.IllusionFormats...)},
		{Command: "illusion score", Name: "rule", Values: Strings(illusion.Rules...)},
		{Command: "simulate", Name: "strategy", Values: simulate.StrategyFlags},
	}
}
