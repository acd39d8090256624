package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/workflow"
	"github.com/m3bench/m3eval/tui"
)

func newAnnotateCmd(g *globalOptions) *cobra.Command {
	var annotator, start, theme, graphics, campaign string
	var filters []string
	cmd := &cobra.Command{
		Use:   "annotate --annotator NAME",
		Short: "Label turns in the terminal",
		Long: `Annotate opens the terminal annotator on the queue of imported turns (episode/turn order),
or, when a campaign assigns the annotator turns (m3eval assign), on exactly those: episodes
kept together, the campaign named in the header (--campaign picks one; default: the latest),
and once done the turns assign --repeat chose, to be labeled afresh. Every change is saved at
once; reopening resumes at the first unfinished item. Press ? inside for the keys and the
guide's quick reference. See docs/annotating.md.`,
		Example: `  m3eval annotate --annotator alice
  m3eval annotate --annotator bob --filter action_type=mislead --filter action_type=mislead_subtle`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(annotator) == "" {
				return usageErrorf("--annotator NAME is required")
			}
			if theme == "" {
				theme = os.Getenv("M3EVAL_THEME")
			}
			if err := tui.ApplyTheme(lipgloss.NewRenderer(io.Discard), theme, os.Getenv); err != nil {
				return usageErrorf("--theme: %v", err)
			}
			gfx, err := tui.DetectGraphics(graphics, os.Getenv)
			if err != nil {
				return usageErrorf("--graphics: %v", err)
			}
			filter, err := workflow.ParseFilter(filters)
			if err != nil {
				return usageIf(err)
			}
			s, r, actions, err := g.openForAnnotating(cmd.Context(), store.Options{Durable: true, LockWait: annotateLockWait})
			if err != nil {
				return err
			}
			defer s.Close()
			q, err := workflow.AnnotatorQueue(cmd.Context(), s, annotator, campaign, filter, workflow.DescribeFilter(filters))
			if err != nil {
				return notFoundHint(usageIf(err), "m3eval sample --list")
			}
			if start != "" {
				// An unknown --start is a mistake in the command line: say so before the
				// screen opens, with the usage exit status.
				if _, ok, err := q.Find(cmd.Context(), start); err != nil {
					return err
				} else if !ok {
					if c := q.Campaign(); c != "" {
						// The campaign was chosen for them (the latest that assigns them
						// turns): say which, and how to open another queue.
						return usageErrorf("--start %s: not in %s's queue of campaign %s%s, which holds only the turns assigned to %s; "+
							"check the id (m3eval assign --sample %s --show), or open another campaign's queue with --campaign NAME",
							start, annotator, c, workflow.DescribeFilter(filters), annotator, c)
					}
					return usageErrorf("--start %s: no such sample_id in this queue%s", start, workflow.DescribeFilter(filters))
				}
			}
			renderer := lipgloss.NewRenderer(cmd.OutOrStdout())
			if err := tui.ApplyTheme(renderer, theme, os.Getenv); err != nil {
				return usageErrorf("--theme: %v", err)
			}
			m := tui.New(tui.Options{Context: cmd.Context(), Queue: q, Rubric: r, Actions: actions, Guide: guideCases(r), StartSample: start, Renderer: renderer, Graphics: gfx})
			if err := tui.Run(cmd.Context(), m, os.Stdin, cmd.OutOrStdout(), tea.WithMouseCellMotion()); err != nil {
				return fmt.Errorf("annotate: %w", err)
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "annotate: "+m.Summary())
			if n := m.Abandoned(); n > 0 {
				return fmt.Errorf("annotate: quit with %d change(s) not saved in %s", n, store.DisplayName(g.dbPath))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&annotator, "annotator", "", "your name, as it will appear on your labels (required)")
	f.StringArrayVar(&filters, "filter", nil, "only turns with KEY=VALUE (repeatable; keys: "+strings.Join(store.FilterKeys(), ", ")+")")
	f.StringVar(&start, "start", "", "open this sample_id first")
	f.StringVar(&graphics, "graphics", "", "kitty, iterm2, sixel, none or auto: how i shows an image full screen (default $M3EVAL_GRAPHICS, else auto: from TERM/TERM_PROGRAM; none inside tmux)")
	f.StringVar(&theme, "theme", "", "dark, light or auto: the terminal's background (default $M3EVAL_THEME, else auto: COLORFGBG or ask the terminal)")
	f.StringVar(&campaign, "campaign", "", "open your queue of this campaign (default: the latest that assigns you turns)")
	cmdutil.Keys(f, "filter", store.FilterKeys()...)
	// --graphics and --theme share their check with $M3EVAL_GRAPHICS and $M3EVAL_THEME,
	// which the TUI makes (its message names the values): here they are only completed.
	cmdutil.Suggest(f, "graphics", tui.GraphicsKitty, tui.GraphicsITerm, tui.GraphicsSixel, tui.GraphicsNone, tui.GraphicsAuto)
	cmdutil.Suggest(f, "theme", tui.ThemeDark, tui.ThemeLight, tui.ThemeAuto)
	names(cmd, map[string]name{"annotator": annotatorName.fresh(), "start": sampleIDName, "campaign": campaignName})
	return cmd
}

// annotateLockWait is how long one save waits for the write lock before the screen says NOT
// SAVED and retries: imports hold the lock 50 ms at a time (store.importChunkTime), so a
// second means another program holds the database, and the annotator should know.
const annotateLockWait = time.Second
