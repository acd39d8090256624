package campaign

import (
	"fmt"
	"github.com/m3bench/m3eval/internal/plural"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/rubric"
)

// QCLabel is one submitted label, as quality control sees it.
type QCLabel struct {
	Annotator string
	Item      string // sample_id
	Turn      rubric.Item
	Values    rubric.Values
	Active    time.Duration
	At        time.Time // submission time: the order runs are read in
}

// QCRepeat is the second label an annotator gave a turn shown again.
type QCRepeat struct {
	Annotator, Item string
	Values          rubric.Values
}

// QCInput is what quality control checks.
type QCInput struct {
	Rubric *rubric.Rubric
	Labels []QCLabel
	// Gold holds the known labels of gold turns, by sample_id.
	Gold    map[string]rubric.Values
	Repeats []QCRepeat
}

// QCOptions are the thresholds of the quality checks. DefaultQCOptions gives the defaults.
type QCOptions struct {
	// StraightRun: the same answers on this many items in a row is straight-lining.
	StraightRun int
	// MinSD and MinItems: a 1–5 field whose standard deviation is under MinSD over at least
	// MinItems items has (near) zero variance.
	MinSD    float64
	MinItems int
	// An item is rushed when its active time is under both RushFraction of the annotator's
	// median and RushSeconds; more than RushShare of the items rushed is flagged.
	RushFraction float64
	RushSeconds  float64
	RushShare    float64
	// RushFloor is the absolute floor in seconds: an item under it is rushed whatever the
	// annotator's median, so one who rushes everything (median 0 s) is caught too.
	RushFloor float64
	// GoldMin is the lowest acceptable share of gold field answers that match; a scale answer
	// within GoldTolerance points matches.
	GoldMin       float64
	GoldTolerance int
	// IntraMin is the lowest acceptable share of repeated field answers that match.
	IntraMin float64
	// MissingComments is how many items the guide asks a comment for may lack one.
	MissingComments int
	// OutlierDelta: a field's alpha that rises by this much when the annotator is left out
	// marks the annotator as the outlier.
	OutlierDelta float64
}

// DefaultQCOptions are the thresholds m3eval qc uses unless told otherwise.
func DefaultQCOptions() QCOptions {
	return QCOptions{StraightRun: 10, MinSD: 0.3, MinItems: 10, RushFraction: 1.0 / 3, RushSeconds: 20, RushShare: 0.1,
		RushFloor: GuideRushFloor,
		GoldMin:   0.7, GoldTolerance: 0, IntraMin: 0.7, MissingComments: 0, OutlierDelta: 0.1}
}

// GuideRushFloor is the default absolute floor of the rushing check, in seconds per item. It
// is a quarter of the fastest pace the annotation guide names (时间估算: a simple item takes
// 1–2 minutes, 2–3 on average). Nobody reads a turn, looks at its image and answers the rubric
// in under 15 s.
const GuideRushFloor = 15.0

// Check names a quality-control check.
type Check string

// The checks.
const (
	CheckStraight Check = "straight_lining"
	CheckVariance Check = "low_variance"
	CheckRushing  Check = "rushing"
	CheckGold     Check = "gold_accuracy"
	CheckIntra    Check = "intra_agreement"
	CheckComments Check = "missing_comments"
	CheckOutlier  Check = "outlier"
)

// Flag is one problem found, with a one-line reason.
type Flag struct {
	Check  Check  `json:"check"`
	Field  string `json:"field,omitempty"`
	Reason string `json:"reason"`
}

// FieldAlpha is a field's Krippendorff alpha with every annotator and without this one.
type FieldAlpha struct {
	Field   string   `json:"field"`
	With    *float64 `json:"alpha_all"`
	Without *float64 `json:"alpha_without"`
}

// AnnotatorQC is one annotator's report.
type AnnotatorQC struct {
	Annotator       string       `json:"annotator"`
	Items           int          `json:"items"`
	Timed           int          `json:"timed_items"` // items with a recorded active time
	MedianSeconds   float64      `json:"median_active_seconds"`
	Rushed          int          `json:"rushed"`
	GoldAnswers     int          `json:"gold_answers"`
	GoldAccuracy    *float64     `json:"gold_accuracy"`
	RepeatAnswers   int          `json:"repeat_answers"`
	IntraAgreement  *float64     `json:"intra_agreement"`
	MissingComments int          `json:"missing_comments"`
	LeaveOneOut     []FieldAlpha `json:"leave_one_out"`
	Flags           []Flag       `json:"flags"`
}

// QC checks every annotator's labels against the thresholds. Annotators come in name order.
// It sorts in.Labels in place, by annotator and then submission time.
func QC(in QCInput, o QCOptions) []AnnotatorQC {
	seen := map[string]bool{}
	for _, l := range in.Labels {
		seen[l.Annotator] = true
	}
	names := slices.Sorted(maps.Keys(seen))
	// Leave-one-out reads the labels in the order given; then each annotator's labels
	// become one stretch of in.Labels, in time order, instead of a copy per annotator (at a
	// million labels the copy doubled the memory of quality control). The sort is stable:
	// labels submitted at the same time stay in the order given, as before.
	loo := leaveOneOut(in, names)
	slices.SortStableFunc(in.Labels, func(a, b QCLabel) int {
		if c := strings.Compare(a.Annotator, b.Annotator); c != 0 {
			return c
		}
		return a.At.Compare(b.At)
	})
	rest := in.Labels
	out := make([]AnnotatorQC, len(names))
	for i, n := range names {
		j := 0
		for j < len(rest) && rest[j].Annotator == n {
			j++
		}
		ls := rest[:j:j]
		rest = rest[j:]
		q := &out[i]
		q.Annotator, q.Items, q.Flags = n, len(ls), []Flag{}
		straight(q, ls, in.Rubric, o)
		rushing(q, ls, o)
		gold(q, ls, in, o)
		intra(q, ls, in, o)
		comments(q, ls, in.Rubric, o)
		q.LeaveOneOut = loo[n]
		for _, fa := range loo[n] {
			if fa.With != nil && fa.Without != nil && *fa.Without-*fa.With >= o.OutlierDelta {
				q.Flags = append(q.Flags, Flag{CheckOutlier, fa.Field, fmt.Sprintf("%s: alpha %.2f with everyone, %.2f without %s (+%.2f)",
					fa.Field, *fa.With, *fa.Without, n, *fa.Without-*fa.With)})
			}
		}
	}
	return out
}

// answerFields are the fields that carry a rating (the comment field is free text).
func answerFields(r *rubric.Rubric) []rubric.Field {
	var out []rubric.Field
	for _, f := range r.Fields {
		if f.Kind != rubric.KindText {
			out = append(out, f)
		}
	}
	return out
}

// straight flags the same 1–5 answers on StraightRun items in a row, and 1–5 fields with
// (near) zero spread. Choice fields stay out of the vector: the rubric fixes them to NA on
// many turns, which would break a run the annotator did not.
func straight(q *AnnotatorQC, ls []QCLabel, r *rubric.Rubric, o QCOptions) {
	var fields []rubric.Field
	for _, f := range r.Fields {
		if f.Kind == rubric.KindScale {
			fields = append(fields, f)
		}
	}
	vector := func(v rubric.Values) string {
		var b strings.Builder
		for _, f := range fields {
			b.WriteString(v[f.Name])
			b.WriteByte(0)
		}
		return b.String()
	}
	best, bestAt, run := 0, 0, 0
	for i := range ls {
		if i > 0 && vector(ls[i].Values) == vector(ls[i-1].Values) {
			run++
		} else {
			run = 1
		}
		if run > best {
			best, bestAt = run, i
		}
	}
	if best >= o.StraightRun {
		first := ls[bestAt-best+1]
		q.Flags = append(q.Flags, Flag{Check: CheckStraight, Reason: fmt.Sprintf("the same answers (%s) on %d items in a row, from %s to %s",
			describe(first.Values, fields), best, first.Item, ls[bestAt].Item)})
	}
	for _, f := range fields {
		var xs []float64
		for _, l := range ls {
			if x, err := strconv.ParseFloat(l.Values[f.Name], 64); err == nil {
				xs = append(xs, x)
			}
		}
		if len(xs) < o.MinItems {
			continue
		}
		if sd := stddev(xs); sd < o.MinSD {
			q.Flags = append(q.Flags, Flag{CheckVariance, f.Name, fmt.Sprintf("%s: standard deviation %.2f over %d items (under %.2f)", f.Name, sd, len(xs), o.MinSD)})
		}
	}
}

func describe(v rubric.Values, fields []rubric.Field) string {
	var parts []string
	for _, f := range fields {
		if x, ok := v[f.Name]; ok {
			parts = append(parts, f.Name+" "+x)
		}
	}
	return strings.Join(parts, ", ")
}

func stddev(xs []float64) float64 {
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var s float64
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(xs)))
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// rushing flags annotators with too many items under the time floor. Only timed labels
// count: a label imported without active_seconds has no recorded time (stored as 0), and
// reading that as "labeled in no time" would flag every imported annotator.
func rushing(q *AnnotatorQC, ls []QCLabel, o QCOptions) {
	secs := make([]float64, 0, len(ls))
	for _, l := range ls {
		if l.Active > 0 {
			secs = append(secs, l.Active.Seconds())
		}
	}
	q.Timed = len(secs)
	if len(secs) == 0 {
		return
	}
	q.MedianSeconds = median(secs)
	// Relative to the annotator's own pace, but never under the absolute floor.
	limit := math.Max(math.Min(q.MedianSeconds*o.RushFraction, o.RushSeconds), o.RushFloor)
	for _, s := range secs {
		if s < limit {
			q.Rushed++
		}
	}
	if float64(q.Rushed)/float64(len(secs)) > o.RushShare {
		q.Flags = append(q.Flags, Flag{Check: CheckRushing, Reason: fmt.Sprintf("%d of %d timed items (%.0f%%) took under %.1f s (the limit is %.2g of the annotator's median %.1f s, at most %.0f s, but never under the floor of %.0f s)",
			q.Rushed, len(secs), 100*float64(q.Rushed)/float64(len(secs)), limit, o.RushFraction, q.MedianSeconds, o.RushSeconds, o.RushFloor)})
	}
}

// matches tells whether two answers of a field agree, scale answers within tol points.
func matches(f rubric.Field, a, b string, tol int) bool {
	if a == b {
		return true
	}
	if f.Kind != rubric.KindScale {
		return false
	}
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	return err1 == nil && err2 == nil && abs(x-y) <= tol
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// compareAnswers counts the rating fields answered in both a and b, and those that match.
func compareAnswers(r *rubric.Rubric, a, b rubric.Values, match func(f rubric.Field, x, y string) bool) (n, same int) {
	for _, f := range answerFields(r) {
		x, ok1 := a[f.Name]
		y, ok2 := b[f.Name]
		if !ok1 || !ok2 {
			continue
		}
		n++
		if match(f, x, y) {
			same++
		}
	}
	return n, same
}

// share is same/n, or nil when there was nothing to compare.
func share(n, same int) *float64 {
	if n == 0 {
		return nil
	}
	s := float64(same) / float64(n)
	return &s
}

// gold compares the annotator's answers on gold turns with the known ones.
func gold(q *AnnotatorQC, ls []QCLabel, in QCInput, o QCOptions) {
	right := 0
	for _, l := range ls {
		if g, ok := in.Gold[l.Item]; ok {
			n, same := compareAnswers(in.Rubric, l.Values, g, func(f rubric.Field, x, y string) bool { return matches(f, x, y, o.GoldTolerance) })
			q.GoldAnswers += n
			right += same
		}
	}
	if q.GoldAccuracy = share(q.GoldAnswers, right); q.GoldAccuracy != nil && *q.GoldAccuracy < o.GoldMin {
		q.Flags = append(q.Flags, Flag{Check: CheckGold, Reason: fmt.Sprintf("gold accuracy %.0f%% (%d of %d answers) below %.0f%%",
			100**q.GoldAccuracy, right, q.GoldAnswers, 100*o.GoldMin)})
	}
}

// intra compares the annotator's first and second labels of repeated turns.
func intra(q *AnnotatorQC, ls []QCLabel, in QCInput, o QCOptions) {
	first := map[string]rubric.Values{}
	for _, l := range ls {
		first[l.Item] = l.Values
	}
	same := 0
	for _, r := range in.Repeats {
		if v, ok := first[r.Item]; ok && r.Annotator == q.Annotator {
			n, s := compareAnswers(in.Rubric, v, r.Values, func(_ rubric.Field, x, y string) bool { return x == y })
			q.RepeatAnswers += n
			same += s
		}
	}
	if q.IntraAgreement = share(q.RepeatAnswers, same); q.IntraAgreement != nil && *q.IntraAgreement < o.IntraMin {
		q.Flags = append(q.Flags, Flag{Check: CheckIntra, Reason: fmt.Sprintf("repeated turns answered the same %.0f%% of the time (%d of %d answers), below %.0f%%",
			100**q.IntraAgreement, same, q.RepeatAnswers, 100*o.IntraMin)})
	}
}

// comments counts the items the rubric's comment rules ask a comment for that have none.
func comments(q *AnnotatorQC, ls []QCLabel, r *rubric.Rubric, o QCOptions) {
	var example string
	for _, l := range ls {
		if len(r.CommentNeeded(l.Values, l.Turn)) > 0 {
			if q.MissingComments == 0 {
				example = l.Item
			}
			q.MissingComments++
		}
	}
	if q.MissingComments > o.MissingComments {
		q.Flags = append(q.Flags, Flag{Check: CheckComments, Reason: fmt.Sprintf("%s the guide asks a comment for %s none (first: %s)", plural.N(q.MissingComments, "item"), map[bool]string{true: "has", false: "have"}[q.MissingComments == 1], example)})
	}
}

// leaveOneOut computes, per rating field, Krippendorff's alpha over all annotators and over
// all but each one (internal/agree's alpha: ordinal for scales, nominal for choices; NA
// answers count as missing).
func leaveOneOut(in QCInput, names []string) map[string][]FieldAlpha {
	out := map[string][]FieldAlpha{}
	rater := map[string]int{}
	for i, n := range names {
		rater[n] = i
	}
	items := map[string]int{}
	var order []string
	for _, l := range in.Labels {
		if _, ok := items[l.Item]; !ok {
			items[l.Item] = len(order)
			order = append(order, l.Item)
		}
	}
	for _, f := range answerFields(in.Rubric) {
		codes := map[string]uint8{}
		var values []int64
		level := agree.LevelNominal
		if f.Kind == rubric.KindScale {
			level = agree.LevelOrdinal
			for v := f.Min; v <= f.Max; v++ {
				codes[strconv.Itoa(v)] = uint8(len(values))
				values = append(values, int64(v))
			}
		} else {
			for _, c := range f.Choices {
				if !c.NA {
					codes[c.Value] = uint8(len(values))
					values = append(values, int64(len(values)))
				}
			}
		}
		if len(values) == 0 || len(values) >= int(agree.Missing) {
			continue
		}
		m := agree.NewMatrix(len(order), len(names))
		for _, l := range in.Labels {
			if c, ok := codes[l.Values[f.Name]]; ok {
				m.Set(items[l.Item], rater[l.Annotator], c)
			}
		}
		with := agree.KrippendorffAlpha(m, values, level)
		for r, n := range names {
			without := agree.NewMatrix(len(order), len(names)-1)
			for i := 0; i < len(order); i++ {
				k := 0
				for j := 0; j < len(names); j++ {
					if j == r {
						continue
					}
					without.Set(i, k, m.At(i, j))
					k++
				}
			}
			fa := FieldAlpha{Field: f.Name, With: ptr(with), Without: ptr(agree.KrippendorffAlpha(without, values, level))}
			out[n] = append(out[n], fa)
		}
	}
	return out
}

func ptr(v agree.Value) *float64 {
	x, ok := v.Float()
	if !ok {
		return nil
	}
	return &x
}
