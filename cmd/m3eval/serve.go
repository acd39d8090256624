package main

import (
	"context"
	"log"
	"time"

	"github.com/spf13/cobra"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/m3bench/m3eval/internal/serve"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/textsafe"
	"github.com/m3bench/m3eval/internal/workflow"
	"github.com/m3bench/m3eval/tui"
)

func newServeCmd(g *globalOptions) *cobra.Command {
	o := serve.Options{}
	cmd := &cobra.Command{
		Use:   "serve --annotators FILE [--listen ADDR] [--host-key FILE] [--admin FILE]",
		Short: "Serve the annotator to a team over SSH",
		Long: `Serve lets every annotator work from their own machine with nothing installed:
` + "`ssh -p 2222 HOST`" + ` opens the annotator of the person whose SSH key it is (listed in
the annotators file as NAME ssh-ed25519 AAAA..., re-read when it changes), on their
campaign queue. Keys in --admin open a read-only status screen. SIGTERM lets every session
save, then exits. Sessions are logged to standard error. See docs/serve.md.`,
		Example: `  m3eval serve --db team.db --annotators annotators.txt
  m3eval serve --db team.db --listen 0.0.0.0:2222 --host-key .m3eval/host_ed25519 \
      --annotators annotators.txt --admin admin_keys --idle-timeout 30m`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Check(); err != nil {
				return usageIf(err)
			}
			s, r, actions, err := g.openForAnnotating(cmd.Context(), store.Options{Durable: true, LockWait: annotateLockWait, Writers: 1})
			if err != nil {
				return err
			}
			defer s.Close()
			o.Log = log.New(cmd.ErrOrStderr(), "", log.LstdFlags)
			o.Annotate = func(in serve.Session) (*serve.App, error) {
				q, err := workflow.AnnotatorQueue(in.Context, s, in.Annotator, "", nil, "")
				if err != nil {
					return nil, err
				}
				m := tui.New(tui.Options{Context: in.Context, Queue: q, Rubric: r, Actions: actions, Guide: guideCases(r),
					Renderer: in.Renderer, Remote: true})
				m.Update(tea.WindowSizeMsg{Width: in.Width, Height: in.Height})
				return &serve.App{Model: m, Done: func(ctx context.Context) (int, error) {
					done, _, err := q.Progress(ctx)
					return done, err
				}}, nil
			}
			o.Status = func(in serve.Session) (tea.Model, error) {
				title := "m3eval · " + textsafe.Line(store.DisplayName(g.dbPath))
				return serve.NewStatus(in.Context, title, in.Renderer, func(ctx context.Context) (string, error) {
					return workflow.TeamScreen(ctx, s, r, time.Now())
				}, s.WatchChanges(in.Context)), nil
			}
			srv, err := serve.New(o)
			if err != nil {
				return err
			}
			return srv.Run(cmd.Context())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
