package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/teamreport"
	"github.com/m3bench/m3eval/internal/workflow"
	"github.com/m3bench/m3eval/tui"
)

func newAdjudicateCmd(g *globalOptions) *cobra.Command {
	var (
		o      = workflow.DecideOptions{Disagree: campaign.DefaultDisagreeOptions()}
		list   bool
		sets   []string
		format string
		output string
	)
	cmd := &cobra.Command{
		Use:   "adjudicate --adjudicator NAME (--list | --turn SAMPLE_ID ...)",
		Short: "Find the turns annotators disagree on and record final labels",
		Long: `Adjudicate finds the turns whose submitted labels disagree — answers --gap or more
apart on a 1-5 field, or split on a choice field (Yes vs No; NA only with --count-na) —
and records the final value of a field, saved as durably as an annotation, with every
change kept for the audit trail. m3eval export --final writes the result.
  --list                       the turns that disagree, open or decided
  --turn ID --take bob         take bob's answers on the disputed fields (or on --field)
  --turn ID --set FIELD=VALUE  score a field anew
Without --list or --turn it opens the adjudication screen: each disputed turn with every
annotator's answers side by side; A, B, ... take that annotator's answer for the field
under the cursor, 1-5 or y/n/a score it, u undoes, left/right move between turns.`,
		Example: `  m3eval adjudicate --adjudicator judy --campaign pilot
  m3eval adjudicate --list --campaign pilot
  m3eval adjudicate --adjudicator judy --turn ep7_turn_3 --take bob
  m3eval adjudicate --adjudicator judy --turn ep7_turn_3 --set correctness=3`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := teamreport.ParseFormat(format, teamreport.Table, teamreport.JSON)
			if err != nil {
				return &usageError{err}
			}
			if list && o.SampleID != "" {
				return usageErrorf("give --list, or --turn SAMPLE_ID with --take or --set, or neither for the screen")
			}
			if !list && o.Adjudicator == "" {
				return usageErrorf("--adjudicator NAME is required")
			}
			o.Set = map[string]string{}
			for _, s := range sets {
				k, v, ok := strings.Cut(s, "=")
				if !ok || k == "" || v == "" {
					return usageErrorf("--set %q: want FIELD=VALUE, e.g. correctness=3", s)
				}
				o.Set[k] = v
			}
			ctx := cmd.Context()
			s, r, err := g.openExisting(ctx, store.Options{Durable: true, ReadOnly: list})
			if err != nil {
				return err
			}
			o.Rubric = r
			defer s.Close()
			if list {
				cases, decided, err := workflow.Cases(ctx, s, o.Campaign, r, o.Disagree)
				if err != nil {
					return notFoundHint(err, "m3eval sample --list")
				}
				return writeOutput(cmd, output, func(w io.Writer, _ bool) error { return teamreport.WriteCases(w, cases, decided, f) })
			}
			if o.SampleID == "" {
				return adjudicateScreen(cmd, s, o)
			}
			edits, err := workflow.Decide(ctx, s, o)
			if err != nil {
				return notFoundHint(usageIf(err), "m3eval sample --list")
			}
			for _, e := range edits {
				from := "scored anew"
				if e.Source != "" {
					from = "from " + e.Source
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s %s = %s (%s)\n", o.SampleID, e.Field, *e.Value, from)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Adjudicator, "adjudicator", "", "your name, recorded with every decision")
	fl.StringVar(&o.Campaign, "campaign", "", "only this campaign's annotators and turns")
	fl.BoolVar(&list, "list", false, "list the turns that disagree")
	fl.StringVar(&o.SampleID, "turn", "", "the turn (sample_id) to decide")
	fl.StringVar(&o.Take, "take", "", "take this annotator's answers")
	fl.StringArrayVar(&o.Fields, "field", nil, "with --take: only this field (repeatable)")
	fl.StringArrayVar(&sets, "set", nil, "FIELD=VALUE: score a field anew (repeatable)")
	fl.IntVar(&o.Disagree.ScaleGap, "gap", o.Disagree.ScaleGap, "1-5 answers this far apart disagree")
	fl.BoolVar(&o.Disagree.CountNA, "count-na", false, "NA against an answer is a disagreement too")
	fl.StringVar(&format, "format", "table", "table or json (with --list)")
	fl.StringVarP(&output, "output", "o", "", "write --list to FILE instead of standard output")
	return cmd
}

// adjudicateScreen opens the adjudication screen on the turns that disagree.
func adjudicateScreen(cmd *cobra.Command, s *store.Store, o workflow.DecideOptions) error {
	ctx := cmd.Context()
	cases, decided, err := workflow.Cases(ctx, s, o.Campaign, o.Rubric, o.Disagree)
	if err != nil {
		return notFoundHint(err, "m3eval sample --list")
	}
	if len(cases) == 0 {
		return fmt.Errorf("no disagreements to adjudicate%s", campaignSuffix(o.Campaign))
	}
	start := 0
	for start < len(decided)-1 && decided[start] {
		start++ // the first turn still open
	}
	m := tui.NewAdjudicate(tui.AdjudicateOptions{Context: ctx, Store: s, Rubric: o.Rubric, Adjudicator: o.Adjudicator,
		Cases: cases, Start: start, Disagree: o.Disagree})
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithInput(os.Stdin), tea.WithOutput(cmd.OutOrStdout()))
	if _, err := p.Run(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("adjudicate: %w", err)
	}
	return ctx.Err()
}

func campaignSuffix(name string) string {
	if name == "" {
		return ""
	}
	return " in campaign " + name
}
