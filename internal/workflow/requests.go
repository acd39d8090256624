package workflow

import (
	"context"
	"fmt"
	"io"
	"strconv"
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

// SampleRequest is m3eval sample's options: draw a sample (Name, N, By...), --list or
// --show one.
type SampleRequest struct {
	SampleOptions
	Where  []string // KEY=VALUE
	List   bool
	Show   string
	Format render.Format
	Active bool     // --active: draw by the judge's uncertainty (ActiveSample)
	Judge  string   // --judge of --active
	Output string   // -o FILE: the command writes there instead of standard output
	notes  []string // for standard error, after the output
}

// AddFlags defines the flags of m3eval sample on fs but -o.
func (c *SampleRequest) AddFlags(fs *pflag.FlagSet) {
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

// Check finds the usage errors of the flags before the database is opened (usage.Err).
func (c *SampleRequest) Check() error {
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
func (c *SampleRequest) StoreOptions() store.Options {
	return store.Options{ReadOnly: c.List || c.Show != ""}
}

// Run is m3eval sample once its flags are parsed and its database is open (StoreOptions):
// it checks the request, draws, lists or shows, and returns the function that writes the
// result in c.Format; Notes has what to say on standard error after it. The command and the
// tests both call it (issue #42). Like every Run of the workflow, it does the work before
// it returns the writer, so that an error comes before any output file is touched.
func (c *SampleRequest) Run(ctx context.Context, st *store.Store, r *rubric.Rubric) (func(io.Writer) error, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	c.notes = nil
	switch {
	case c.List:
		samples, err := st.Samples(ctx)
		if err != nil {
			return nil, err
		}
		return func(w io.Writer) error { return WriteSamples(w, samples, c.Format) }, nil
	case c.Show != "":
		info, err := st.Sample(ctx, c.Show)
		if err != nil {
			return nil, err
		}
		if info.Params.Active != nil {
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
		return func(w io.Writer) error { return WriteSample(w, info, c.Format) }, nil
	}
	if c.Active {
		info, err := ActiveSample(ctx, st, r, ActiveOptions{Name: c.Name, N: c.N, Seed: c.Seed, Judge: c.Judge, Mix: sample.DefaultMix})
		if err != nil {
			return nil, err
		}
		return func(w io.Writer) error { return writeActive(w, info, c.Format) }, nil
	}
	info, err := Sample(ctx, st, c.SampleOptions)
	if err != nil {
		return nil, err
	}
	c.notes = emptyStrata(info)
	return func(w io.Writer) error { return WriteSample(w, info, c.Format) }, nil
}

// Notes are what the last Run wants the user to know, for standard error after the output:
// the strata a drawn sample left empty, and how to give each a turn.
func (c *SampleRequest) Notes() []string { return c.notes }

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

// AssignRequest is m3eval assign's options: assign a sample to Names (comma-separated), or
// --show the assignment.
type AssignRequest struct {
	AssignOptions
	Names  string
	Show   bool
	Format render.Format
	Output string // -o FILE: the command writes there instead of standard output
	// GoldRateGiven and RepeatGiven say whether --gold-rate and --repeat were given (their
	// flags set them): a rate not given keeps the earlier run's (Check).
	GoldRateGiven, RepeatGiven bool
}

// AddFlags defines the flags of m3eval assign on fs but -o.
func (c *AssignRequest) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Sample, "sample", "", "the sample to assign (m3eval sample --list)")
	fs.StringVar(&c.Names, "annotators", "", "comma-separated annotator names; earlier ones first when extending")
	fs.IntVar(&c.Overlap, "overlap", 0, "annotators per turn")
	fs.Int64Var(&c.Seed, "seed", 42, "random seed for ties and gold turns")
	fs.StringVar(&c.GoldFile, "gold", "", "labeled turns in the guide's format to use as gold")
	fs.Var(givenFloat{&c.GoldRate, &c.GoldRateGiven}, "gold-rate", "share of each queue that is gold, e.g. 0.05 (default: the earlier run's, or 0.05 with --gold)")
	fs.Var(givenFloat{&c.RepeatRate, &c.RepeatGiven}, "repeat", "share of each annotator's turns shown to them again after their queue, e.g. 0.1 (default: the earlier run's)")
	fs.BoolVar(&c.Show, "show", false, "show the assignment instead of changing it")
	cmdutil.EnumVar(fs, &c.Format, "format", render.Table, Formats, "output format")
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
func (c *AssignRequest) Check() error {
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
func (c *AssignRequest) StoreOptions() store.Options { return store.Options{ReadOnly: c.Show} }

// Run is m3eval assign once its flags are parsed and its database is open (StoreOptions):
// it checks the request, assigns (or reads the assignment with Show) and returns the
// function that writes it in c.Format.
func (c *AssignRequest) Run(ctx context.Context, st *store.Store, r *rubric.Rubric) (func(io.Writer) error, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
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

// QCRequest is m3eval qc's options: the quality-control flags of a campaign's annotators,
// or of every label.
type QCRequest struct {
	campaign.QCOptions
	Campaign string
	Format   render.Format
	Output   string // -o FILE: the command writes there instead of standard output
}

// NewQCRequest has the default thresholds.
func NewQCRequest() *QCRequest { return &QCRequest{QCOptions: campaign.DefaultQCOptions()} }

// AddFlags defines the flags of m3eval qc on fs but -o.
func (c *QCRequest) AddFlags(fs *pflag.FlagSet) {
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

// StoreOptions says how to open the database: qc only reads.
func (c *QCRequest) StoreOptions() store.Options { return store.Options{ReadOnly: true} }

// Run is m3eval qc once its flags are parsed and its database is open (StoreOptions): it
// checks the labels and returns the function that writes the flags in c.Format. Its flags
// have no usage errors to find, so it has no Check.
func (c *QCRequest) Run(ctx context.Context, st *store.Store, r *rubric.Rubric) (func(io.Writer) error, error) {
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

// AdjudicateRequest is m3eval adjudicate's options: --list the disputed turns, decide one
// (SampleID with Take or Sets), or, with neither, open the adjudication screen (Screen).
type AdjudicateRequest struct {
	DecideOptions
	List   bool
	Sets   []string // FIELD=VALUE
	Format render.Format
	Output string // -o FILE: where --list goes instead of standard output (Check drops it otherwise)
}

// NewAdjudicateRequest has the default disagreement rule.
func NewAdjudicateRequest() *AdjudicateRequest {
	return &AdjudicateRequest{DecideOptions: DecideOptions{Disagree: campaign.DefaultDisagreeOptions()}}
}

// AddFlags defines the flags of m3eval adjudicate on fs but -o.
func (c *AdjudicateRequest) AddFlags(fs *pflag.FlagSet) {
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
func (c *AdjudicateRequest) Screen() bool { return !c.List && c.SampleID == "" }

// Check finds the usage errors of the flags before the database is opened (usage.Err).
func (c *AdjudicateRequest) Check() error {
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
func (c *AdjudicateRequest) StoreOptions() store.Options {
	return store.Options{Durable: true, ReadOnly: c.List}
}

// Run is m3eval adjudicate --list, or a decision on one turn, once its flags are parsed and
// its database is open (StoreOptions): it checks the request, lists or decides, and returns
// the function that writes the list in c.Format or the values decided. The screen
// (Screen) is the command's: it starts from OpenCases.
func (c *AdjudicateRequest) Run(ctx context.Context, st *store.Store, r *rubric.Rubric) (func(io.Writer) error, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
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
func (c *AdjudicateRequest) OpenCases(ctx context.Context, st *store.Store, r *rubric.Rubric) ([]campaign.Case, int, error) {
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

// StatusRequest is m3eval status's options: it has none but the database, which Run names.
type StatusRequest struct{}

// StoreOptions says how to open the database: status only reads, and needs no rubric.
func (StatusRequest) StoreOptions() store.Options { return store.Options{ReadOnly: true} }

// Run is m3eval status once its database is open (StoreOptions): it reads the items and
// each annotator's progress, and returns the function that writes them (WriteStatus).
// database is the name the first line gives the database.
func (StatusRequest) Run(ctx context.Context, st *store.Store, database string) (func(io.Writer) error, error) {
	status, err := st.Status(ctx)
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) error { return WriteStatus(w, database, status) }, nil
}
