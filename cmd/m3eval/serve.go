package main

import (
	"context"
	"fmt"
	"log"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/serve"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/teamreport"
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
` + "`ssh -p 2222 HOST`" + ` opens the annotator of the person whose SSH key it is, on their
assigned queue when a campaign gives them one. Keys are listed in the annotators file, one
per line: NAME ssh-ed25519 AAAA... [comment] (several lines per name allowed). Any other
key is turned away before a screen opens. The file is read again when it changes and on
SIGHUP. Keys in the --admin file (authorized_keys format) open a read-only status screen.
SIGTERM or ctrl+c stops taking connections, lets every session save, and exits.
One log line per session start and end and per refused key goes to standard error.`,
		Example: `  m3eval serve --db team.db --annotators annotators.txt
  m3eval serve --db team.db --listen 0.0.0.0:2222 --host-key .m3eval/host_ed25519 \
      --annotators annotators.txt --admin admin_keys --idle-timeout 30m`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Annotators == "" {
				return usageErrorf("--annotators FILE is required (lines of NAME ssh-ed25519 AAAA...)")
			}
			if o.IdleTimeout < 0 {
				return usageErrorf("--idle-timeout %s: want a duration ≥ 0", o.IdleTimeout)
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
				m := tui.New(tui.Options{Context: in.Context, Queue: q, Rubric: r, Actions: actions,
					Renderer: in.Renderer, Remote: true})
				m.Update(tea.WindowSizeMsg{Width: in.Width, Height: in.Height})
				return &serve.App{Model: m, Done: func(ctx context.Context) (int, error) {
					done, _, err := q.Progress(ctx)
					return done, err
				}}, nil
			}
			o.Status = func(in serve.Session) (tea.Model, error) {
				title := "m3eval · " + textsafe.Line(g.dbPath)
				return serve.NewStatus(in.Context, title, in.Renderer, func(ctx context.Context) (string, error) {
					return teamStatus(ctx, s, r, time.Now())
				}), nil
			}
			srv, err := serve.New(o)
			if err != nil {
				return err
			}
			return srv.Run(cmd.Context())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Listen, "listen", "0.0.0.0:2222", "address to listen on (port 0: any free port, logged)")
	fl.StringVar(&o.HostKey, "host-key", ".m3eval/host_ed25519", "the server's SSH host key; created (mode 0600) when missing")
	fl.StringVar(&o.Annotators, "annotators", "", "file of NAME ssh-ed25519 AAAA... lines: who may annotate (required)")
	fl.StringVar(&o.Admins, "admin", "", "authorized_keys file whose keys open the read-only status screen")
	fl.DurationVar(&o.IdleTimeout, "idle-timeout", 0, "close a session after this long without a key (e.g. 30m; 0: never)")
	fl.DurationVar(&o.Grace, "shutdown-grace", 10*time.Second, "on SIGTERM, how long sessions get to save before the server exits")
	return cmd
}

// teamStatus is the admin's status screen: every annotator's progress, what they submitted
// today (since local midnight) and at what pace, and the quality-control flags of their
// labels (m3eval qc over every label).
func teamStatus(ctx context.Context, s *store.Store, r *rubric.Rubric, now time.Time) (string, error) {
	st, err := s.Status(ctx)
	if err != nil {
		return "", err
	}
	d, err := s.Review(ctx, "")
	if err != nil {
		return "", err
	}
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	today := map[string]int{}
	first := map[string]time.Time{}
	for _, l := range d.Labels {
		if l.At.Before(midnight) {
			continue
		}
		today[l.Annotator]++
		if f, ok := first[l.Annotator]; !ok || l.At.Before(f) {
			first[l.Annotator] = l.At
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d items in %d episodes\n\n", st.Turns, st.Episodes)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "annotator\tdone\tdraft\tflagged\tskipped\ttoday\ttoday /h\tmedian active\t")
	for _, a := range st.Annotators {
		median, rate := "—", "—"
		if a.HasMedian {
			median = a.MedianActive.Round(time.Second).String()
		}
		if n := today[a.Name]; n > 0 {
			if h := now.Sub(first[a.Name]).Hours(); h > 0 {
				rate = fmt.Sprintf("%.1f", float64(n)/max(h, 1.0/60))
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t\n", textsafe.Line(a.Name), a.Done, a.Draft, a.Flagged, a.Skipped, today[a.Name], rate, median)
	}
	if err := tw.Flush(); err != nil {
		return "", err
	}
	if len(st.Annotators) == 0 {
		b.WriteString("no annotations yet\n")
	}
	b.WriteString("\n")
	qs, err := workflow.QC(ctx, s, "", r, campaign.DefaultQCOptions())
	if err != nil {
		return "", err
	}
	if err := teamreport.WriteQC(&b, "all labels", qs, teamreport.Table); err != nil {
		return "", err
	}
	return b.String(), nil
}
