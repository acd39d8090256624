package workflow

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/cmdstore"
	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/sample"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// The --format values of the campaign commands (their flags are declared with them).
var (
	// Formats are the values of --format of sample, assign and adjudicate --list.
	Formats = []render.Format{render.Table, render.JSON}
	// QCFormats are the values of qc's --format.
	QCFormats = []render.Format{render.Table, render.JSON, render.Markdown}
)

// pairs reads repeated KEY=VALUE flags; a value may be empty unless needValue.
func pairs(flag string, vals []string, example string, needValue bool) (map[string][]string, error) {
	m := map[string][]string{}
	for _, s := range vals {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" || (needValue && v == "") {
			return nil, usagef("%s %q: want %s", flag, s, example)
		}
		m[k] = append(m[k], v)
	}
	return m, nil
}

// SampleCommand is m3eval sample's options: draw a sample (Name, N, By...), --list or
// --show one.
type SampleCommand struct {
	SampleOptions
	Where  []string // KEY=VALUE
	List   bool
	Show   string
	Format render.Format
	Active bool   // --active: draw by the judge's uncertainty (ActiveSample)
	Judge  string // --judge of --active
	Output string // -o FILE: the command writes there instead of standard output
}

// AddFlags defines the flags of m3eval sample on fs.
func (c *SampleCommand) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Name, "name", "", "name of the sample (required to draw one)")
	fs.IntVar(&c.N, "n", 0, "number of turns to draw")
	fs.StringArrayVar(&c.Params.By, "by", nil, "stratify by this turn attribute (repeatable: strata are the combinations)")
	cmdutil.Suggest(fs, "by", store.SampleKeys()...) // meta.NAME stands for any meta key
	fs.Int64Var(&c.Seed, "seed", 42, "random seed")
	fs.IntVar(&c.Params.MinPerStratum, "min-per-stratum", 0, "draw at least K turns from every stratum (all of a smaller one)")
	fs.StringArrayVar(&c.Where, "where", nil, "only turns with KEY=VALUE (repeatable; values of one key are alternatives)")
	cmdutil.Keys(fs, "where", store.SampleKeys()...)
	fs.BoolVar(&c.List, "list", false, "list the stored samples")
	fs.StringVar(&c.Show, "show", "", "show the stored sample NAME")
	cmdutil.EnumVar(fs, &c.Format, "format", render.Table, Formats, "output format")
	fs.BoolVar(&c.Active, "active", false, "draw the turns the --judge is least certain about more often, recording each turn's inclusion probability (for m3eval estimate --sample)")
	fs.StringVar(&c.Judge, "judge", "", "with --active: the judge whose scores (and the other judges' disagreement with them) choose the turns")
	fs.StringVarP(&c.Output, "output", "o", "", "write to FILE instead of standard output")
}

// Check finds the usage errors of the flags before the database is opened (usage.Err).
func (c *SampleCommand) Check() error {
	var err error
	if c.List && c.Show != "" {
		return usagef("--list and --show cannot go together")
	}
	if c.Active {
		switch {
		case c.List || c.Show != "":
			return usagef("--active draws a sample: it does not go with --list or --show")
		case c.Judge == "":
			return usagef("--active needs --judge NAME: the judge whose uncertainty chooses the turns")
		case len(c.Params.By) > 0 || len(c.Where) > 0 || c.Params.MinPerStratum > 0:
			return usagef("--active draws from every turn the judge scored: it does not go with --by, --where or --min-per-stratum")
		}
		return nil
	}
	if c.Judge != "" {
		return usagef("--judge goes with --active")
	}
	if !c.List && c.Show == "" && len(c.Params.By) == 0 {
		return usagef("--by KEY is required (one of %s)", strings.Join(store.SampleKeys(), ", "))
	}
	if len(c.Where) > 0 {
		c.Params.Where, err = pairs("--where", c.Where, "KEY=VALUE, e.g. action_type=mislead", false)
	}
	return err
}

// StoreOptions says how to open the database: listing and showing only read.
func (c *SampleCommand) StoreOptions() store.Options {
	return store.Options{ReadOnly: c.List || c.Show != ""}
}

// Run is m3eval sample once its flags are parsed (docs/architecture.md, "How a command is
// wired"): it checks the command, opens the database (StoreOptions), draws, lists or shows,
// and writes the result in c.Format to e's output or -o; after it, on e's standard error,
// the strata a drawn sample left empty. Like every Run of the workflow, it does the work
// before it writes, so that an error comes before any output file is touched.
func (c *SampleCommand) Run(ctx context.Context, e *cmdio.IO) error {
	if err := c.Check(); err != nil {
		return err
	}
	st, r, err := cmdstore.Open(ctx, e, c.StoreOptions(), false)
	if err != nil {
		return err
	}
	defer st.Close()
	write, notes, err := c.run(ctx, st, r)
	if err != nil {
		return err
	}
	if err := e.Write(c.Output, string(c.Format), func(w io.Writer, _ bool) error { return write(w) }); err != nil {
		return err
	}
	return printNotes(e, notes)
}

// printNotes prints a command's notes on e's standard error, after its output.
func printNotes(e *cmdio.IO, notes []string) error {
	for _, line := range notes {
		if _, err := fmt.Fprintln(e.Stderr(), line); err != nil {
			return err
		}
	}
	return nil
}

// run draws, lists or shows, and returns the function that writes the result and the notes
// for standard error.
func (c *SampleCommand) run(ctx context.Context, st *store.Store, r *rubric.Rubric) (func(io.Writer) error, []string, error) {
	switch {
	case c.List:
		samples, err := st.Samples(ctx)
		if err != nil {
			return nil, nil, err
		}
		return func(w io.Writer) error { return WriteSamples(w, samples, c.Format) }, nil, nil
	case c.Show != "":
		info, err := st.Sample(ctx, c.Show)
		if err != nil {
			return nil, nil, err
		}
		if info.Params.Active != nil {
			// An active sample: say how its turns were drawn, with their probabilities.
			incl, err := st.SampleInclusion(ctx, c.Show)
			if err != nil {
				return nil, nil, err
			}
			for _, p := range incl {
				info.Strata[0].Inclusion = append(info.Strata[0].Inclusion, p)
			}
			return func(w io.Writer) error { return writeActive(w, info, c.Format) }, nil, nil
		}
		return func(w io.Writer) error { return WriteSample(w, info, c.Format) }, nil, nil
	}
	if c.Active {
		info, err := ActiveSample(ctx, st, r, ActiveOptions{Name: c.Name, N: c.N, Seed: c.Seed, Judge: c.Judge, Mix: sample.DefaultMix})
		if err != nil {
			return nil, nil, err
		}
		return func(w io.Writer) error { return writeActive(w, info, c.Format) }, nil, nil
	}
	info, err := Sample(ctx, st, c.SampleOptions)
	if err != nil {
		return nil, nil, err
	}
	return func(w io.Writer) error { return WriteSample(w, info, c.Format) }, emptyStrata(info), nil
}

// emptyStrata says which strata a drawn sample left without a turn, and how to give each
// one: proportional allocation rounds a small stratum's share down to 0 without a word.
func emptyStrata(info *store.SampleInfo) []string {
	var empty []string
	nonEmpty := 0
	for _, st := range info.Strata {
		if st.Available == 0 {
			continue
		}
		nonEmpty++
		if st.Drawn == 0 {
			k := make([]string, len(st.Key))
			for i, v := range st.Key {
				if v == "" {
					v = "(none)"
				}
				k[i] = v
			}
			empty = append(empty, textsafe.Line(strings.Join(k, "/")))
		}
	}
	if len(empty) == 0 {
		return nil
	}
	name := textsafe.Line(info.Name)
	note := fmt.Sprintf("sample %s: %d of %d strata got no turns (--n %d shared in proportion to their size): %s",
		name, len(empty), nonEmpty, info.Size, strings.Join(empty, ", "))
	hint := "to draw at least one turn from every stratum, draw a new sample with --min-per-stratum 1"
	if info.Size < nonEmpty {
		hint += fmt.Sprintf(" and --n %d or more (one per stratum)", nonEmpty)
	}
	return []string{note, hint}
}

// AssignCommand is m3eval assign's options: assign a sample to Names (comma-separated), or
// --show the assignment.
type AssignCommand struct {
	AssignOptions
	Names  string
	Show   bool
	Format render.Format
	Output string // -o FILE: the command writes there instead of standard output
	// GoldRateGiven and RepeatGiven say whether --gold-rate and --repeat were given (their
	// flags set them): a rate not given keeps the earlier run's (Check).
	GoldRateGiven, RepeatGiven bool
}

// AddFlags defines the flags of m3eval assign on fs.
func (c *AssignCommand) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Sample, "sample", "", "the sample to assign (m3eval sample --list)")
	fs.StringVar(&c.Names, "annotators", "", "comma-separated annotator names; earlier ones first when extending")
	fs.IntVar(&c.Overlap, "overlap", 0, "annotators per turn")
	fs.Int64Var(&c.Seed, "seed", 42, "random seed for ties and gold turns")
	fs.StringVar(&c.GoldFile, "gold", "", "labeled turns in the guide's format to use as gold")
	fs.Var(givenFloat{&c.GoldRate, &c.GoldRateGiven}, "gold-rate", "share of each queue that is gold, e.g. 0.05 (default: the earlier run's, or 0.05 with --gold)")
	fs.Var(givenFloat{&c.RepeatRate, &c.RepeatGiven}, "repeat", "share of each annotator's turns shown to them again after their queue, e.g. 0.1 (default: the earlier run's)")
	fs.BoolVar(&c.Show, "show", false, "show the assignment instead of changing it")
	cmdutil.EnumVar(fs, &c.Format, "format", render.Table, Formats, "output format")
	fs.StringVarP(&c.Output, "output", "o", "", "write to FILE instead of standard output")
}

// givenFloat is a float flag that also records that it was given, so that whoever parses
// the flags (the command or a test) gets the same defaults from Check. It prints and parses
// as pflag's own float flag does.
type givenFloat struct {
	v     *float64
	given *bool
}

func (f givenFloat) String() string {
	if f.v == nil {
		return "0"
	}
	return strconv.FormatFloat(*f.v, 'g', -1, 64)
}

func (f givenFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return err
	}
	*f.v, *f.given = v, true
	return nil
}

func (f givenFloat) Type() string { return "float" }

// Check finds the usage errors of the flags before the database is opened (usage.Err), and
// sets the rates not given: a re-run keeps the earlier ones (-1; a first run: none, or 0.05
// of gold with --gold).
func (c *AssignCommand) Check() error {
	switch {
	case c.GoldRateGiven:
	case c.GoldFile != "":
		c.GoldRate = 0.05
	default:
		c.GoldRate = -1
	}
	if !c.RepeatGiven {
		c.RepeatRate = -1
	}
	if c.Sample == "" {
		return usagef("--sample NAME is required (see m3eval sample --list)")
	}
	if !c.Show && (c.Names == "" || c.Overlap == 0) {
		return usagef("--annotators A,B,... and --overlap K are required (or --show)")
	}
	return nil
}

// StoreOptions says how to open the database: showing only reads.
func (c *AssignCommand) StoreOptions() store.Options { return store.Options{ReadOnly: c.Show} }

// Run is m3eval assign once its flags are parsed: it checks the command, opens the database
// (StoreOptions), assigns (or reads the assignment with Show) and writes it in c.Format to
// e's output or -o.
func (c *AssignCommand) Run(ctx context.Context, e *cmdio.IO) error {
	return runWrite(ctx, e, c.Check, c.StoreOptions(), &c.Output, c.Format, c.run)
}

// runWrite is the Run of the workflow's commands that write one result: check, open the
// database as so says, run, and write the result to e's output or the -o file *out (read
// after check, which may drop it: a decision is printed, not written to -o).
func runWrite(ctx context.Context, e *cmdio.IO, check func() error, so store.Options, out *string, format render.Format,
	run func(context.Context, *store.Store, *rubric.Rubric) (func(io.Writer) error, error)) error {
	if err := check(); err != nil {
		return err
	}
	st, r, err := cmdstore.Open(ctx, e, so, false)
	if err != nil {
		return err
	}
	defer st.Close()
	write, err := run(ctx, st, r)
	if err != nil {
		return err
	}
	return e.Write(*out, string(format), func(w io.Writer, _ bool) error { return write(w) })
}

// run assigns, or reads the assignment, and returns the function that writes it.
func (c *AssignCommand) run(ctx context.Context, st *store.Store, r *rubric.Rubric) (func(io.Writer) error, error) {
	if c.Show {
		camp, err := st.Campaign(ctx, c.Sample)
		if err != nil {
			return nil, err
		}
		return func(w io.Writer) error { return WriteCampaign(w, camp, nil, c.Format) }, nil
	}
	o := c.AssignOptions
	o.Rubric, o.Annotators = r, strings.Split(c.Names, ",")
	res, err := Assign(ctx, st, o)
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) error { return WriteCampaign(w, res.Campaign, res.Warnings, c.Format) }, nil
}

// QCCommand is m3eval qc's options: the quality-control flags of a campaign's annotators,
// or of every label.
type QCCommand struct {
	campaign.QCOptions
	Campaign string
	Format   render.Format
	Output   string // -o FILE: the command writes there instead of standard output
}

// NewQCCommand has the default thresholds.
func NewQCCommand() *QCCommand { return &QCCommand{QCOptions: campaign.DefaultQCOptions()} }

// AddFlags defines the flags of m3eval qc on fs.
func (c *QCCommand) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Campaign, "campaign", "", "check this campaign's annotators on its turns (default: every label)")
	fs.IntVar(&c.StraightRun, "straight-run", c.StraightRun, "straight-lining: this many identical answer sets in a row")
	fs.Float64Var(&c.MinSD, "min-sd", c.MinSD, "low variance: a 1-5 field's standard deviation under this")
	fs.IntVar(&c.MinItems, "min-items", c.MinItems, "low variance: only over at least this many items")
	fs.Float64Var(&c.RushFraction, "rush-fraction", c.RushFraction, "rushing: items under this share of the annotator's median active time")
	fs.Float64Var(&c.RushSeconds, "rush-seconds", c.RushSeconds, "rushing: ... and under this many seconds")
	fs.Float64Var(&c.RushShare, "rush-share", c.RushShare, "rushing: flag when more than this share of items is rushed")
	fs.Float64Var(&c.RushFloor, "rush-floor", c.RushFloor, "rushing: an item under this many seconds is rushed whatever the median (default: a quarter of the guide's fastest pace, 1 minute a simple item; 0 turns it off)")
	fs.Float64Var(&c.GoldMin, "gold-min", c.GoldMin, "gold accuracy: lowest acceptable share of matching answers")
	fs.IntVar(&c.GoldTolerance, "gold-tolerance", c.GoldTolerance, "gold accuracy: a 1-5 answer within this many points matches")
	fs.Float64Var(&c.IntraMin, "intra-min", c.IntraMin, "intra-annotator agreement: lowest acceptable share of repeated answers that match")
	fs.IntVar(&c.MissingComments, "missing-comments", c.MissingComments, "missing comments: how many are tolerated")
	fs.Float64Var(&c.OutlierDelta, "outlier-delta", c.OutlierDelta, "outlier: alpha gain when the annotator is left out")
	cmdutil.EnumVar(fs, &c.Format, "format", render.Table, QCFormats, "output format")
	fs.StringVarP(&c.Output, "output", "o", "", "write to FILE instead of standard output")
}

// StoreOptions says how to open the database: qc only reads.
func (c *QCCommand) StoreOptions() store.Options { return store.Options{ReadOnly: true} }

// Run is m3eval qc once its flags are parsed: it opens the database read only, checks the
// labels and writes the flags in c.Format to e's output or -o. Its flags have no usage
// errors to find, so it has no Check.
func (c *QCCommand) Run(ctx context.Context, e *cmdio.IO) error {
	return runWrite(ctx, e, func() error { return nil }, c.StoreOptions(), &c.Output, c.Format, c.run)
}

// run checks the labels and returns the function that writes the flags.
func (c *QCCommand) run(ctx context.Context, st *store.Store, r *rubric.Rubric) (func(io.Writer) error, error) {
	qs, err := QC(ctx, st, c.Campaign, r, c.QCOptions)
	if err != nil {
		return nil, err
	}
	title := c.Campaign
	if title == "" {
		title = "all labels"
	}
	return func(w io.Writer) error { return WriteQC(w, title, qs, c.Format) }, nil
}

// AdjudicateCommand is m3eval adjudicate's options: --list the disputed turns, decide one
// (SampleID with Take or Sets), or, with neither, open the adjudication screen (Screen).
type AdjudicateCommand struct {
	DecideOptions
	List   bool
	Sets   []string // FIELD=VALUE
	Format render.Format
	Output string // -o FILE: where --list goes instead of standard output (Check drops it otherwise)
}

// NewAdjudicateCommand has the default disagreement rule.
func NewAdjudicateCommand() *AdjudicateCommand {
	return &AdjudicateCommand{DecideOptions: DecideOptions{Disagree: campaign.DefaultDisagreeOptions()}}
}

// AddFlags defines the flags of m3eval adjudicate on fs.
func (c *AdjudicateCommand) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Adjudicator, "adjudicator", "", "your name, recorded with every decision")
	fs.StringVar(&c.Campaign, "campaign", "", "only this campaign's annotators and turns")
	fs.BoolVar(&c.List, "list", false, "list the turns that disagree")
	fs.StringVar(&c.SampleID, "turn", "", "the turn (sample_id) to decide")
	fs.StringVar(&c.Take, "take", "", "take this annotator's answers")
	fs.StringArrayVar(&c.Fields, "field", nil, "with --take: only this field (repeatable)")
	fs.StringArrayVar(&c.Sets, "set", nil, "FIELD=VALUE: score a field anew (repeatable)")
	fs.BoolVar(&c.ClearFlag, "clear-flag", false, "clear the turn's flags once reviewed (export --final keeps them until then)")
	fs.IntVar(&c.Disagree.ScaleGap, "gap", c.Disagree.ScaleGap, "1-5 answers this far apart disagree")
	fs.BoolVar(&c.Disagree.CountNA, "count-na", false, "NA against an answer is a disagreement too")
	cmdutil.EnumVar(fs, &c.Format, "format", render.Table, Formats, "output format (with --list)")
	fs.StringVarP(&c.Output, "output", "o", "", "write --list to FILE instead of standard output")
}

// Screen says whether the command opens the adjudication screen.
func (c *AdjudicateCommand) Screen() bool { return !c.List && c.SampleID == "" }

// Check finds the usage errors of the flags before the database is opened (usage.Err).
func (c *AdjudicateCommand) Check() error {
	if !c.List {
		c.Output = "" // a decision is printed, not written to --output
	}
	if c.List && c.SampleID != "" {
		return usagef("give --list, or --turn SAMPLE_ID with --take or --set, or neither for the screen")
	}
	if !c.List && c.Format != render.Table {
		// Deciding and the screen write no list: the format would be ignored.
		return usagef("--format %s is the output of --list: give --list, or drop --format", c.Format)
	}
	if !c.List && c.Adjudicator == "" {
		return usagef("--adjudicator NAME is required")
	}
	sets, err := pairs("--set", c.Sets, "FIELD=VALUE, e.g. correctness=3", true)
	c.Set = map[string]string{}
	for k, v := range sets {
		c.Set[k] = v[len(v)-1]
	}
	return err
}

// StoreOptions says how to open the database: decisions are saved as durably as annotations.
func (c *AdjudicateCommand) StoreOptions() store.Options {
	return store.Options{Durable: true, ReadOnly: c.List}
}

// Run is m3eval adjudicate --list, or a decision on one turn, once its flags are parsed: it
// checks the command, opens the database (StoreOptions: durably), lists or decides, and
// writes the list in c.Format (to -o too) or the values decided. The screen (Screen) is
// the command's, which needs the terminal: it starts from OpenCases.
func (c *AdjudicateCommand) Run(ctx context.Context, e *cmdio.IO) error {
	return runWrite(ctx, e, c.Check, c.StoreOptions(), &c.Output, c.Format, c.run)
}

// run lists or decides, and returns the function that writes the list or the decision.
func (c *AdjudicateCommand) run(ctx context.Context, st *store.Store, r *rubric.Rubric) (func(io.Writer) error, error) {
	c.Rubric = r
	if c.List {
		cases, decided, err := Cases(ctx, st, c.Campaign, r, c.Disagree)
		if err != nil {
			return nil, err
		}
		return func(w io.Writer) error { return WriteCases(w, cases, decided, c.Format) }, nil
	}
	edits, err := Decide(ctx, st, c.DecideOptions)
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) error {
		for _, e := range edits {
			if e.Field == campaign.FlagField {
				fmt.Fprintf(w, "%s flags cleared\n", c.SampleID)
				continue
			}
			from := "scored anew"
			if e.Source != "" {
				from = "from " + e.Source
			}
			fmt.Fprintf(w, "%s %s = %s (%s)\n", c.SampleID, e.Field, *e.Value, from)
		}
		return nil
	}, nil
}

// OpenCases are the disputed turns the adjudication screen shows, and the first still
// open; no disputed turn is an error.
func (c *AdjudicateCommand) OpenCases(ctx context.Context, st *store.Store, r *rubric.Rubric) ([]campaign.Case, int, error) {
	c.Rubric = r
	cases, decided, err := Cases(ctx, st, c.Campaign, r, c.Disagree)
	if err != nil {
		return nil, 0, err
	}
	if len(cases) == 0 {
		return nil, 0, fmt.Errorf("no disagreements or flags to adjudicate%s", inCampaign(c.Campaign))
	}
	start := 0
	for start < len(decided)-1 && decided[start] {
		start++ // the first turn still open
	}
	return cases, start, nil
}

// StatusCommand is m3eval status's options: it has none of its own.
type StatusCommand struct{}

// AddFlags defines the flags of m3eval status on fs: none but the ones every command has.
func (StatusCommand) AddFlags(*pflag.FlagSet) {}

// Run is m3eval status: it opens the database read only, without a rubric (status uses
// none), and writes its items and each annotator's progress to e's output (WriteStatus).
func (StatusCommand) Run(ctx context.Context, e *cmdio.IO) error {
	if err := cmdstore.MustExist(e); err != nil {
		return err
	}
	st, err := cmdstore.OpenStore(ctx, e, nil, store.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer st.Close()
	status, err := st.Status(ctx)
	if err != nil {
		return err
	}
	return WriteStatus(e.Stdout(), store.DisplayName(e.DB), status)
}
