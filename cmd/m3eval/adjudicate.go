package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/workflow"
	"github.com/m3bench/m3eval/tui"
)

func newAdjudicateCmd(g *globalOptions) *cobra.Command {
	o := workflow.NewAdjudicateCommand()
	cmd := &cobra.Command{
		Use:   "adjudicate --adjudicator NAME (--list | --turn SAMPLE_ID ...)",
		Short: "Find the turns annotators disagree on or flagged and record final labels",
		Long: `Adjudicate finds the turns whose submitted labels disagree (answers --gap or more apart
on a 1-5 field, or split on a choice field) or that an annotator flagged, and records final
values, durably and with an audit trail; m3eval export --final writes them, flagged (with
the reasons) until an adjudicator clears the flags.
  --list                       the turns that disagree or are flagged, open or decided
  --turn ID --take bob         take bob's answers on the disputed fields (or on --field)
  --turn ID --set FIELD=VALUE  score a field anew
  --turn ID --clear-flag       the flags are reviewed: export --final drops them
Without --list or --turn it opens the adjudication screen: every annotator's answers side
by side; A, B, ... take one, 1-5 or y/n/a score anew, f clears flags, u undoes. See docs/campaign.md.`,
		Example: `  m3eval adjudicate --adjudicator judy --campaign pilot
  m3eval adjudicate --list --campaign pilot
  m3eval adjudicate --adjudicator judy --turn ep7_turn_3 --take bob
  m3eval adjudicate --adjudicator judy --turn ep7_turn_3 --set correctness=3`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Screen() {
				return g.adjudicateScreen(cmd, o)
			}
			return notFoundHint(usageIf(o.Run(cmd.Context(), g.io(cmd))), "m3eval sample --list")
		},
	}
	o.AddFlags(cmd.Flags())
	names(cmd, map[string]name{"campaign": campaignName, "take": annotatorName, "turn": sampleIDName})
	return cmd
}

// adjudicateScreen opens the adjudication screen on the turns that disagree.
func (g *globalOptions) adjudicateScreen(cmd *cobra.Command, o *workflow.AdjudicateCommand) error {
	if err := o.Check(); err != nil {
		return usageIf(err)
	}
	ctx := cmd.Context()
	// The screen's writes wait for the lock as the annotator's do (a second, then NOT SAVED
	// and a retry), not the batch commands' half a minute of "… saving" with nothing said.
	opts := o.StoreOptions()
	opts.LockWait = annotateLockWait
	s, r, actions, err := g.openForAnnotating(ctx, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	cases, start, err := o.OpenCases(ctx, s, r)
	if err != nil {
		return notFoundHint(err, "m3eval sample --list")
	}
	// The full-screen image view (i) speaks what the terminal announces (none inside tmux).
	gfx, _ := tui.DetectGraphics("", os.Getenv)
	var unsaved int
	m := tui.NewAdjudicate(tui.AdjudicateOptions{Context: ctx, Store: s, Rubric: r, Actions: actions, Adjudicator: o.Adjudicator,
		Cases: cases, Start: start, Disagree: o.Disagree, Graphics: gfx, Unsaved: func(n int) { unsaved = n }})
	if err := tui.Run(ctx, m, os.Stdin, cmd.OutOrStdout()); err != nil {
		return fmt.Errorf("adjudicate: %w", err)
	}
	if unsaved > 0 {
		return fmt.Errorf("adjudicate: quit with %d decision(s) not saved: the database did not answer; run adjudicate again to redo them", unsaved)
	}
	return nil
}
