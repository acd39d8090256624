package workflow

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/campaign"
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

// Render writes what a command shows.
type Render func(w io.Writer) error

// A Command is one campaign command as given on the command line (sample, assign, qc,
// adjudicate): Check finds the usage errors before the database is opened, StoreOptions
// says how to open it, Run does the work and returns what to show.
type Command interface {
	Check() error
	StoreOptions() store.Options
	Run(ctx context.Context, st *store.Store, r *rubric.Rubric) (Render, error)
}

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

// SampleCommand is m3eval sample: draw a sample (Name, N, By...), --list or --show one.
type SampleCommand struct {
	SampleOptions
	Where  []string // KEY=VALUE
	List   bool
	Show   string
	Format render.Format
	Active bool     // --active: draw by the judge's uncertainty (ActiveSample)
	Judge  string   // --judge of --active
	notes  []string // for standard error, after the output
}

// AddFlags defines the flags of m3eval sample on fs but -o.
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
}

// Check implements Command.
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

// StoreOptions implements Command: listing and showing only read.
func (c *SampleCommand) StoreOptions() store.Options {
	return store.Options{ReadOnly: c.List || c.Show != ""}
}

// Run implements Command.
func (c *SampleCommand) Run(ctx context.Context, st *store.Store, r *rubric.Rubric) (Render, error) {
	switch {
	case c.List:
		samples, err := st.Samples(ctx)
		return func(w io.Writer) error { return WriteSamples(w, samples, c.Format) }, err
	case c.Show != "":
		info, err := st.Sample(ctx, c.Show)
		if err == nil && info.Params.Active != nil {
			// An active sample: say how its turns were drawn, with their probabilities.
			incl, err := st.SampleInclusion(ctx, c.Show)
			if err != nil {
				return nil, err
			}
			for _, p := range incl {
				info.Strata[0].Inclusion = append(info.Strata[0].Inclusion, p)
			}
			return func(w io.Writer) error { return writeActive(w, info, c.Format) }, nil
		}
		return func(w io.Writer) error { return WriteSample(w, info, c.Format) }, err
	}
	if c.Active {
		info, err := ActiveSample(ctx, st, r, ActiveOptions{Name: c.Name, N: c.N, Seed: c.Seed, Judge: c.Judge, Mix: sample.DefaultMix})
		return func(w io.Writer) error { return writeActive(w, info, c.Format) }, err
	}
	info, err := Sample(ctx, st, c.SampleOptions)
	if err == nil {
		c.notes = emptyStrata(info)
	}
	return func(w io.Writer) error { return WriteSample(w, info, c.Format) }, err
}

// Notes implements Noter: what the drawing wants the user to know, for standard error.
func (c *SampleCommand) Notes() []string { return c.notes }

// Noter is a command with notes for standard error after its output (a sample whose
// allocation left strata empty).
type Noter interface{ Notes() []string }

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

// AssignCommand is m3eval assign: assign a sample to Names (comma-separated), or --show
// the assignment.
type AssignCommand struct {
	AssignOptions
	Names  string
	Show   bool
	Format render.Format
}

// AddFlags defines the flags of m3eval assign on fs but -o.
func (c *AssignCommand) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Sample, "sample", "", "the sample to assign (m3eval sample --list)")
	fs.StringVar(&c.Names, "annotators", "", "comma-separated annotator names; earlier ones first when extending")
	fs.IntVar(&c.Overlap, "overlap", 0, "annotators per turn")
	fs.Int64Var(&c.Seed, "seed", 42, "random seed for ties and gold turns")
	fs.StringVar(&c.GoldFile, "gold", "", "labeled turns in the guide's format to use as gold")
	fs.Float64Var(&c.GoldRate, "gold-rate", 0, "share of each queue that is gold, e.g. 0.05 (default: the earlier run's, or 0.05 with --gold)")
	fs.Float64Var(&c.RepeatRate, "repeat", 0, "share of each annotator's turns shown to them again after their queue, e.g. 0.1 (default: the earlier run's)")
	fs.BoolVar(&c.Show, "show", false, "show the assignment instead of changing it")
	cmdutil.EnumVar(fs, &c.Format, "format", render.Table, Formats, "output format")
}

// RateDefaults sets the rates the user did not give: a re-run keeps the earlier ones (a
// first run: none, or 0.05 of gold with --gold).
func (c *AssignCommand) RateDefaults(goldRateGiven, repeatGiven bool) {
	switch {
	case goldRateGiven:
	case c.GoldFile != "":
		c.GoldRate = 0.05
	default:
		c.GoldRate = -1
	}
	if !repeatGiven {
		c.RepeatRate = -1
	}
}

// Check implements Command.
func (c *AssignCommand) Check() error {
	if c.Sample == "" {
		return usagef("--sample NAME is required (see m3eval sample --list)")
	}
	if !c.Show && (c.Names == "" || c.Overlap == 0) {
		return usagef("--annotators A,B,... and --overlap K are required (or --show)")
	}
	return nil
}

// StoreOptions implements Command: showing only reads.
func (c *AssignCommand) StoreOptions() store.Options { return store.Options{ReadOnly: c.Show} }

// Run implements Command.
func (c *AssignCommand) Run(ctx context.Context, st *store.Store, r *rubric.Rubric) (Render, error) {
	if c.Show {
		camp, err := st.Campaign(ctx, c.Sample)
		return func(w io.Writer) error { return WriteCampaign(w, camp, nil, c.Format) }, err
	}
	o := c.AssignOptions
	o.Rubric, o.Annotators = r, strings.Split(c.Names, ",")
	res, err := Assign(ctx, st, o)
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) error { return WriteCampaign(w, res.Campaign, res.Warnings, c.Format) }, nil
}

// QCCommand is m3eval qc: the quality-control flags of a campaign's annotators, or of
// every label.
type QCCommand struct {
	campaign.QCOptions
	Campaign string
	Format   render.Format
}

// NewQCCommand has the default thresholds.
func NewQCCommand() *QCCommand { return &QCCommand{QCOptions: campaign.DefaultQCOptions()} }

// AddFlags defines the flags of m3eval qc on fs but -o.
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
}

// Check implements Command.
func (c *QCCommand) Check() error {
	return nil
}

// StoreOptions implements Command: qc only reads.
func (c *QCCommand) StoreOptions() store.Options { return store.Options{ReadOnly: true} }

// Run implements Command.
func (c *QCCommand) Run(ctx context.Context, st *store.Store, r *rubric.Rubric) (Render, error) {
	qs, err := QC(ctx, st, c.Campaign, r, c.QCOptions)
	title := c.Campaign
	if title == "" {
		title = "all labels"
	}
	return func(w io.Writer) error { return WriteQC(w, title, qs, c.Format) }, err
}

// AdjudicateCommand is m3eval adjudicate: --list the disputed turns, decide one (SampleID
// with Take or Sets), or, with neither, open the adjudication screen (Screen).
type AdjudicateCommand struct {
	DecideOptions
	List   bool
	Sets   []string // FIELD=VALUE
	Format render.Format
}

// NewAdjudicateCommand has the default disagreement rule.
func NewAdjudicateCommand() *AdjudicateCommand {
	return &AdjudicateCommand{DecideOptions: DecideOptions{Disagree: campaign.DefaultDisagreeOptions()}}
}

// AddFlags defines the flags of m3eval adjudicate on fs but -o.
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
}

// Screen says whether the command opens the adjudication screen.
func (c *AdjudicateCommand) Screen() bool { return !c.List && c.SampleID == "" }

// Check implements Command.
func (c *AdjudicateCommand) Check() error {
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

// StoreOptions implements Command: decisions are saved as durably as annotations.
func (c *AdjudicateCommand) StoreOptions() store.Options {
	return store.Options{Durable: true, ReadOnly: c.List}
}

// Run implements Command: --list, or a decision on one turn.
func (c *AdjudicateCommand) Run(ctx context.Context, st *store.Store, r *rubric.Rubric) (Render, error) {
	c.Rubric = r
	if c.List {
		cases, decided, err := Cases(ctx, st, c.Campaign, r, c.Disagree)
		return func(w io.Writer) error { return WriteCases(w, cases, decided, c.Format) }, err
	}
	edits, err := Decide(ctx, st, c.DecideOptions)
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
	}, err
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
