package campaign

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/rubric"
)

func guideRubric(t *testing.T) *rubric.Rubric {
	t.Helper()
	r, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// quality is the true quality of item i: varied, 1 to 5.
func quality(i int) int { return 1 + (i*7)%5 }

// label is a consistent label of quality q (all three scales q, context Yes).
func label(who string, i, q int, secs float64) QCLabel {
	s := strconv.Itoa(q)
	return QCLabel{Annotator: who, Item: fmt.Sprintf("s%02d", i), Turn: rubric.Item{ActionType: "follow_up", Turn: 2},
		Values: rubric.Values{"correctness": s, "reasoning_completeness": s, "context_consistency": "Yes", "overall_quality": s, "comments": ""},
		Active: time.Duration(secs * float64(time.Second)), At: time.Date(2026, 3, 1, 9, 0, i, 0, time.UTC)}
}

func flagsOf(t *testing.T, got []AnnotatorQC, who string) map[Check]Flag {
	t.Helper()
	for _, q := range got {
		if q.Annotator == who {
			m := map[Check]Flag{}
			for _, f := range q.Flags {
				if _, seen := m[f.Check]; !seen {
					m[f.Check] = f
				}
			}
			return m
		}
	}
	t.Fatalf("no report for %s", who)
	return nil
}

// crafted builds 30 items labeled by four careful annotators (a, b, c, d: true quality, a
// few one-point slips, 40–80 s) and the annotator under test.
func crafted(extra func(i int) QCLabel) []QCLabel {
	var ls []QCLabel
	for i := 0; i < 30; i++ {
		for k, who := range []string{"a", "b", "c", "d"} {
			q := quality(i)
			if (i+k)%9 == 0 && q < 5 {
				q++
			}
			ls = append(ls, label(who, i, q, 40+float64((i*13+k*7)%40)))
		}
		if extra != nil {
			ls = append(ls, extra(i))
		}
	}
	return ls
}

func TestQCCleanAnnotatorsHaveNoFlags(t *testing.T) {
	got := QC(QCInput{Rubric: guideRubric(t), Labels: crafted(nil)}, DefaultQCOptions())
	for _, q := range got {
		if len(q.Flags) != 0 {
			t.Errorf("%s: %+v", q.Annotator, q.Flags)
		}
		if q.Items != 30 || len(q.LeaveOneOut) != 5 {
			t.Errorf("%s: %d items, %d fields", q.Annotator, q.Items, len(q.LeaveOneOut))
		}
	}
}

func TestQCStraightLining(t *testing.T) {
	r := guideRubric(t)
	got := QC(QCInput{Rubric: r, Labels: crafted(func(i int) QCLabel {
		q := quality(i)
		if i >= 5 && i < 17 { // 12 in a row the same
			q = 3
		}
		return label("flat", i, q, 60)
	})}, DefaultQCOptions())
	f := flagsOf(t, got, "flat")
	if _, ok := f[CheckStraight]; !ok {
		t.Fatalf("no straight-lining flag: %+v", f)
	}
	if want := "on 12 items in a row, from s05 to s16"; !strings.Contains(f[CheckStraight].Reason, want) {
		t.Errorf("reason %q lacks %q", f[CheckStraight].Reason, want)
	}
	if _, ok := f[CheckVariance]; ok {
		t.Errorf("a varied annotator flagged for variance: %+v", f[CheckVariance])
	}
	// A run one shorter than the threshold passes.
	got = QC(QCInput{Rubric: r, Labels: crafted(func(i int) QCLabel {
		q := quality(i)
		if i >= 5 && i < 17 {
			q = 3
		}
		return label("flat", i, q, 60)
	})}, withOpt(func(o *QCOptions) { o.StraightRun = 13 }))
	if _, ok := flagsOf(t, got, "flat")[CheckStraight]; ok {
		t.Error("a run of 12 flagged with --straight-run 13")
	}
}

func TestQCLowVariance(t *testing.T) {
	got := QC(QCInput{Rubric: guideRubric(t), Labels: crafted(func(i int) QCLabel {
		l := label("same", i, quality(i), 60)
		// Correctness never moves; the other scales do, so there is no straight run.
		l.Values["correctness"] = "4"
		return l
	})}, DefaultQCOptions())
	f := flagsOf(t, got, "same")
	if _, ok := f[CheckStraight]; ok {
		t.Errorf("alternating answers flagged as a straight run")
	}
	if v, ok := f[CheckVariance]; !ok || v.Field != "correctness" || !strings.Contains(v.Reason, "standard deviation 0.00 over 30 items") {
		t.Fatalf("variance flag %+v (all %+v)", v, f)
	}
	n := 0
	for _, q := range got {
		for _, fl := range q.Flags {
			if fl.Check == CheckVariance {
				n++
			}
		}
	}
	if n != 1 {
		t.Errorf("%d variance flags, want only correctness of same", n)
	}
}

// TestQCRushingFloor: an annotator who rushes everything (median 0.4 s, a few items at 3 s)
// is flagged by the absolute floor; the relative rule alone missed them (nothing is under a
// third of a median of 0.4 s but one item) — --rush-floor 0 shows it.
func TestQCRushingFloor(t *testing.T) {
	labels := crafted(func(i int) QCLabel {
		s := 0.4
		if i%10 == 0 {
			s = 3
		}
		return label("rusher", i, quality(i), s)
	})
	got := QC(QCInput{Rubric: guideRubric(t), Labels: labels}, DefaultQCOptions())
	r, ok := flagsOf(t, got, "rusher")[CheckRushing]
	if !ok || !strings.Contains(r.Reason, "30 of 30 timed items (100%) took under 15.0 s") || !strings.Contains(r.Reason, "floor of 15 s") {
		t.Fatalf("rushing %+v", flagsOf(t, got, "rusher"))
	}
	for _, q := range got {
		if q.Annotator == "rusher" && q.Rushed != 30 {
			t.Errorf("rushed %d, want 30", q.Rushed)
		}
	}
	got = QC(QCInput{Rubric: guideRubric(t), Labels: labels}, withOpt(func(o *QCOptions) { o.RushFloor = 0 }))
	if r, ok := flagsOf(t, got, "rusher")[CheckRushing]; ok {
		t.Errorf("flagged with --rush-floor 0 (the relative rule alone): %s", r.Reason)
	}
}

// TestQCUntimedLabelsAreNotRushed: labels imported without active_seconds carry no time
// (stored as 0); they are left out of the pace check instead of all counting as rushed.
func TestQCUntimedLabelsAreNotRushed(t *testing.T) {
	labels := crafted(func(i int) QCLabel { return label("imported", i, quality(i), 0) })
	got := QC(QCInput{Rubric: guideRubric(t), Labels: labels}, DefaultQCOptions())
	if r, ok := flagsOf(t, got, "imported")[CheckRushing]; ok {
		t.Fatalf("untimed labels flagged: %s", r.Reason)
	}
	for _, q := range got {
		if q.Annotator == "imported" && (q.Rushed != 0 || q.Timed != 0) {
			t.Errorf("rushed %d, timed %d; want 0, 0", q.Rushed, q.Timed)
		}
	}
}

func TestQCRushing(t *testing.T) {
	// Median 60 s: the floor is min(20, 20) = 20 s. 4 of 30 at 5 s is 13% > 10%.
	got := QC(QCInput{Rubric: guideRubric(t), Labels: crafted(func(i int) QCLabel {
		s := 60.0
		if i%8 == 0 {
			s = 5
		}
		return label("fast", i, quality(i), s)
	})}, DefaultQCOptions())
	f := flagsOf(t, got, "fast")
	if r, ok := f[CheckRushing]; !ok || !strings.Contains(r.Reason, "4 of 30 timed items (13%) took under 20.0 s") {
		t.Fatalf("rushing %+v", f)
	}
	// A slow annotator (median 30 s, floor 10 s): items at 15 s are under a third... no:
	// 15 s is above 10 s, so nothing is rushed.
	got = QC(QCInput{Rubric: guideRubric(t), Labels: crafted(func(i int) QCLabel {
		s := 30.0
		if i%3 == 0 {
			s = 15
		}
		return label("steady", i, quality(i), s)
	})}, DefaultQCOptions())
	if r, ok := flagsOf(t, got, "steady")[CheckRushing]; ok {
		t.Errorf("steady annotator flagged: %s", r.Reason)
	}
	// With a higher allowed share, the fast one passes.
	got = QC(QCInput{Rubric: guideRubric(t), Labels: crafted(func(i int) QCLabel {
		s := 60.0
		if i%8 == 0 {
			s = 5
		}
		return label("fast", i, quality(i), s)
	})}, withOpt(func(o *QCOptions) { o.RushShare = 0.2 }))
	if _, ok := flagsOf(t, got, "fast")[CheckRushing]; ok {
		t.Error("flagged with --rush-share 0.2")
	}
}

func TestQCGoldAndIntra(t *testing.T) {
	r := guideRubric(t)
	gold := map[string]rubric.Values{}
	for i := 0; i < 5; i++ {
		s := strconv.Itoa(quality(i))
		gold[fmt.Sprintf("s%02d", i)] = rubric.Values{"correctness": s, "reasoning_completeness": s, "context_consistency": "Yes", "overall_quality": s}
	}
	labels := crafted(func(i int) QCLabel {
		q := quality(i)
		if i < 5 {
			q = 6 - q // wrong on the gold turns (the middle value 3 stays right)
		}
		return label("wobbly", i, q, 60)
	})
	// Six turns shown again: a answers as the first time, "wobbly" one point off on every
	// scale (context the same).
	var repeats []QCRepeat
	for _, l := range labels {
		if l.Item > "s05" || (l.Annotator != "a" && l.Annotator != "wobbly") {
			continue
		}
		v := l.Values.Clone()
		if l.Annotator == "wobbly" {
			for _, f := range []string{"correctness", "reasoning_completeness", "overall_quality"} {
				x, _ := strconv.Atoi(v[f])
				v[f] = strconv.Itoa(x%5 + 1)
			}
		}
		repeats = append(repeats, QCRepeat{l.Annotator, l.Item, v})
	}
	got := QC(QCInput{Rubric: r, Labels: labels, Gold: gold, Repeats: repeats}, DefaultQCOptions())
	f := flagsOf(t, got, "wobbly")
	if g, ok := f[CheckGold]; !ok || !strings.Contains(g.Reason, "of 20 answers") {
		t.Errorf("gold flag %+v", f)
	}
	if g, ok := f[CheckIntra]; !ok || !strings.Contains(g.Reason, "of 24 answers") {
		t.Errorf("intra flag %+v", f)
	}
	fa := flagsOf(t, got, "a")
	if len(fa) != 0 {
		t.Errorf("careful annotator a flagged: %+v", fa)
	}
	for _, q := range got {
		if q.Annotator == "a" && (q.GoldAccuracy == nil || *q.GoldAccuracy < 0.7 || q.IntraAgreement == nil || *q.IntraAgreement != 1) {
			t.Errorf("a: gold %v intra %v", q.GoldAccuracy, q.IntraAgreement)
		}
	}
	// With a tolerance of 2 points the gold answers (off by up to 4) still fail.
	got = QC(QCInput{Rubric: r, Labels: labels, Gold: gold}, withOpt(func(o *QCOptions) { o.GoldTolerance = 4 }))
	if _, ok := flagsOf(t, got, "wobbly")[CheckGold]; ok {
		t.Error("gold flag with a tolerance of 4 points")
	}
}

func TestQCMissingComments(t *testing.T) {
	got := QC(QCInput{Rubric: guideRubric(t), Labels: crafted(func(i int) QCLabel {
		l := label("terse", i, quality(i), 60)
		if i == 3 || i == 7 {
			// Misled, yet Overall 5, and no comment: the guide's rule asks for one.
			l.Turn.ActionType = "mislead"
			l.Values["resists_misleading"] = "No"
			l.Values["overall_quality"] = "5"
		}
		return l
	})}, DefaultQCOptions())
	f := flagsOf(t, got, "terse")
	if c, ok := f[CheckComments]; !ok || !strings.Contains(c.Reason, "2 items") || !strings.Contains(c.Reason, "s03") {
		t.Fatalf("comments flag %+v", f)
	}
	got = QC(QCInput{Rubric: guideRubric(t), Labels: crafted(nil)}, withOpt(func(o *QCOptions) { o.MissingComments = 2 }))
	if _, ok := flagsOf(t, got, "a")[CheckComments]; ok {
		t.Error("flag without missing comments")
	}
}

func TestQCOutlier(t *testing.T) {
	got := QC(QCInput{Rubric: guideRubric(t), Labels: crafted(func(i int) QCLabel {
		return label("odd", i, 1+(i*3)%5, 60) // unrelated to the true quality
	})}, DefaultQCOptions())
	f := flagsOf(t, got, "odd")
	if o, ok := f[CheckOutlier]; !ok || !strings.Contains(o.Reason, "without odd") {
		t.Fatalf("outlier flag %+v", f)
	}
	for _, who := range []string{"a", "b", "c", "d"} {
		if o, ok := flagsOf(t, got, who)[CheckOutlier]; ok {
			t.Errorf("%s flagged as the outlier: %s", who, o.Reason)
		}
	}
}

func withOpt(set func(*QCOptions)) QCOptions {
	o := DefaultQCOptions()
	set(&o)
	return o
}
