package vistrajqa

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/progress"
	"github.com/m3bench/m3eval/internal/usage"
)

// AddFlags defines the flags of m3eval convert vistrajqa on fs.
func (o *Request) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.Inputs, "input", nil, "VisTrajQA sessions-*.jsonl file(s); repeat, separate with commas, or list after the flag")
	fs.StringVar(&o.Output, "output", "", "output directory (created; must not exist or be empty unless --force)")
	fs.BoolVar(&o.Multimodal, "multimodal", false, "put image captions into attachments instead of the user turn text")
	fs.BoolVar(&o.KeepGoing, "keep-going", false, "convert the good records and report the bad ones instead of stopping at the first")
	fs.BoolVar(&o.Force, "force", false, "replace an existing non-empty output directory")
}

// Run is m3eval convert vistrajqa once its command line is parsed: it checks the request
// (usage errors), converts (Convert) under a progress bar of the bytes read, and says what
// it did: the validation report and a count on e's standard output, the records --keep-going
// skipped on its standard error (and the report of a failed validation).
func (q *Request) Run(ctx context.Context, e *cmdio.IO) error {
	return e.WithBar("convert", progress.Bytes, func(report progress.Func, stdout, stderr io.Writer) error {
		opt := *q
		opt.Progress = progress.Tee(report, q.Progress)
		return opt.run(ctx, stdout, stderr)
	})
}

// run is Run on the given streams.
func (q *Request) run(ctx context.Context, stdout, stderr io.Writer) error {
	opt := *q
	if len(opt.Inputs) == 0 {
		return usage.Errorf("no input: give --input FILE...")
	}
	if opt.Output == "" {
		return usage.Errorf("no output: give --output DIR")
	}
	res, err := ConvertFiles(ctx, opt)
	if res != nil && res.Report != nil && !res.Report.OK() {
		res.Report.WriteText(stderr)
	}
	if err != nil {
		return err
	}
	if err := res.Report.WriteText(stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "converted %d trajectories into %s\n", res.Converted, opt.Output)
	if len(res.Skipped) > 0 {
		writeSkipped(stderr, res.Skipped)
	}
	return nil
}

// writeSkipped lists the records --keep-going left out, the first 100 of them.
func writeSkipped(w io.Writer, skipped []*RecordError) {
	const listed = 100
	fmt.Fprintf(w, "skipped %d bad records:\n", len(skipped))
	for i, e := range skipped {
		if i == listed {
			fmt.Fprintf(w, "  ... and %d more\n", len(skipped)-listed)
			break
		}
		fmt.Fprintf(w, "  %v\n", e)
	}
}
