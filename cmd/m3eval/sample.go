package main

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/teamreport"
	"github.com/m3bench/m3eval/internal/usage"
	"github.com/m3bench/m3eval/internal/workflow"
)

func newSampleCmd(g *globalOptions) *cobra.Command {
	var (
		o      workflow.SampleOptions
		wheres []string
		list   bool
		show   string
		format string
		output string
	)
	cmd := &cobra.Command{
		Use:   "sample --name NAME --n N --by KEY [--by KEY]...",
		Short: "Draw a named, stratified sample of the imported turns for a campaign",
		Long: `Sample draws N of the imported turns, stratified by one or more turn attributes
(` + strings.Join(store.SampleKeys(), ", ") + `), with proportional allocation by
largest remainder (the allocation m3eval illusion sample uses) and --min-per-stratum K to
guarantee rare strata (a stratum with fewer turns gives all it has). Strata are taken in
key order and each draws with Python's random.sample from one random.Random(--seed), so
the same database, options and seed always give the same sample. A sampled turn brings its
episode's earlier turns as context: the annotator shows them, nobody scores them.
The sample, its seed and its options are stored; --list lists the samples, --show NAME
shows one: per stratum the turns available, allocated and drawn.`,
		Example: `  m3eval sample --name pilot --n 300 --by action_type --seed 42
  m3eval sample --name zh --n 100 --by action_type --by model --min-per-stratum 5 --where meta.language=zh
  m3eval sample --list
  m3eval sample --show pilot --format json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := teamreport.ParseFormat(format, teamreport.Table, teamreport.JSON)
			if err != nil {
				return &usageError{err}
			}
			if list && show != "" {
				return usageErrorf("--list and --show cannot go together")
			}
			if !list && show == "" && len(o.Params.By) == 0 {
				return usageErrorf("--by KEY is required (one of %s)", strings.Join(store.SampleKeys(), ", "))
			}
			if len(wheres) > 0 {
				o.Params.Where = map[string][]string{}
				for _, w := range wheres {
					k, v, ok := strings.Cut(w, "=")
					if !ok || k == "" {
						return usageErrorf("--where %q: want KEY=VALUE, e.g. action_type=mislead", w)
					}
					o.Params.Where[k] = append(o.Params.Where[k], v)
				}
			}
			ctx := cmd.Context()
			s, _, err := g.openExisting(ctx, store.Options{ReadOnly: list || show != ""})
			if err != nil {
				return err
			}
			defer s.Close()
			switch {
			case list:
				samples, err := s.Samples(ctx)
				if err != nil {
					return err
				}
				return writeOutput(cmd, output, func(w io.Writer, _ bool) error { return teamreport.WriteSamples(w, samples, f) })
			case show != "":
				info, err := s.Sample(ctx, show)
				if err != nil {
					return notFoundHint(err, "m3eval sample --list")
				}
				return writeOutput(cmd, output, func(w io.Writer, _ bool) error { return teamreport.WriteSample(w, info, f) })
			}
			info, err := workflow.Sample(ctx, s, o)
			if err != nil {
				return usageIf(err)
			}
			return writeOutput(cmd, output, func(w io.Writer, _ bool) error { return teamreport.WriteSample(w, info, f) })
		},
	}
	cmd.Flags().StringVar(&o.Name, "name", "", "name of the sample (required to draw one)")
	cmd.Flags().IntVar(&o.N, "n", 0, "number of turns to draw")
	cmd.Flags().StringArrayVar(&o.Params.By, "by", nil, "stratify by this turn attribute (repeatable: strata are the combinations)")
	cmd.Flags().Int64Var(&o.Seed, "seed", 42, "random seed")
	cmd.Flags().IntVar(&o.Params.MinPerStratum, "min-per-stratum", 0, "draw at least K turns from every stratum (all of a smaller one)")
	cmd.Flags().StringArrayVar(&wheres, "where", nil, "only turns with KEY=VALUE (repeatable; values of one key are alternatives)")
	cmd.Flags().BoolVar(&list, "list", false, "list the stored samples")
	cmd.Flags().StringVar(&show, "show", "", "show the stored sample NAME")
	cmd.Flags().StringVar(&format, "format", "table", "table or json")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to FILE instead of standard output")
	return cmd
}

// openExisting opens an existing --db and loads the rubric in use: how every campaign
// command starts.
func (o *globalOptions) openExisting(ctx context.Context, so store.Options) (*store.Store, *rubric.Rubric, error) {
	if err := o.mustExist(); err != nil {
		return nil, nil, err
	}
	r, err := o.loadRubric()
	if err != nil {
		return nil, nil, err
	}
	s, err := o.openStore(ctx, r, so)
	if err != nil {
		return nil, nil, err
	}
	return s, r, nil
}

// usageIf marks the usage errors of the internal packages as usage errors (exit status 2).
func usageIf(err error) error {
	if errors.Is(err, usage.Err) {
		return &usageError{err}
	}
	return err
}

// notFoundHint adds where to look when a named thing does not exist.
func notFoundHint(err error, hint string) error {
	if errors.Is(err, store.ErrNotFound) {
		return &usageError{errors.New(err.Error() + " (see " + hint + ")")}
	}
	return err
}
