package judge

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/illusion"
)

// The action-space metrics of the M3Bench design (shared/spec/action-space.md), per action
// type and model, computed from the judge's per-turn signals. A rate (a yes/no per turn) gets
// the 95% Wilson score interval; a score in [0,1] per turn (evidence coverage, the
// Cross-Image Confusion Score) gets a 95% percentile bootstrap interval over turns, seeded.

// Interval kinds.
const (
	IntervalWilson    = "wilson"
	IntervalBootstrap = "bootstrap"
)

// MetricRow is one metric of one action type and model.
type MetricRow struct {
	Action   string  `json:"action_type"`
	Model    string  `json:"model"`
	Metric   string  `json:"metric"`
	N        int     `json:"n"`
	Value    float64 `json:"value"`
	Lo       float64 `json:"ci_low"`
	Hi       float64 `json:"ci_high"`
	Interval string  `json:"interval"`
}

// TrendRow is a cross-image score for one model in one bin of a trend dimension.
type TrendRow struct {
	Score     string  `json:"score"`
	Dimension string  `json:"dimension"`
	Bin       string  `json:"bin"`
	Model     string  `json:"model"`
	N         int     `json:"n"`
	Value     float64 `json:"value"`
	Lo        float64 `json:"ci_low"`
	Hi        float64 `json:"ci_high"`
	Interval  string  `json:"interval"`
}

// MetricsReport is what m3eval score --metrics prints.
type MetricsReport struct {
	Rules     string      `json:"rules"`
	Bootstrap int         `json:"bootstrap_replicates"`
	Seed      uint64      `json:"seed"`
	Metrics   []MetricRow `json:"metrics"`
	Trends    []TrendRow  `json:"trends"`
}

// Metric names.
const (
	MEvidenceCoverage      = "evidence_coverage"
	MRefusalRate           = "refusal_rate"
	MAcknowledgment        = "acknowledgment"
	MUpdateRate            = "update_rate"
	MUptake                = "uptake"
	MResistanceRate        = "resistance_rate"
	MEvidenceCitation      = "evidence_citation"
	MUpdateResponsiveness  = "update_responsiveness"
	MTemporalConsistency   = "temporal_consistency"
	MFocusMaintenance      = "focus_maintenance"
	MConciseness           = "conciseness"
	MRedundancyDetection   = "redundancy_detection"
	MSpecificity           = "specificity"
	MContextIsolation      = "context_isolation"
	MCrossImageConfusion   = "cross_image_confusion_score"
	MDisambiguation        = "disambiguation_score"
	DimConfusable          = "confusable_objects"
	DimConversationLength  = "conversation_length"
	binUnknown             = "unknown"
	defaultBootstrapRounds = 2000
)

// obs is one turn's observation of a metric: a rate's 0/1 or a score in [0,1].
type obs struct {
	v    float64
	rate bool
}

type cell struct {
	action, model, metric string
}

type trendCell struct {
	score, dim, bin, model string
}

// Metrics accumulates the observations of judged episodes.
type Metrics struct {
	j      *Judge
	cells  map[cell][]obs
	trends map[trendCell][]obs
}

// NewMetrics starts an empty accumulation.
func (j *Judge) NewMetrics() *Metrics {
	return &Metrics{j: j, cells: map[cell][]obs{}, trends: map[trendCell][]obs{}}
}

// AddEpisode adds the observations of one judged episode: its turns (in turn order), their
// verdicts, and which turns to count.
func (m *Metrics) AddEpisode(turns []dataset.Turn, vs []Verdict, chosen []bool) {
	r := m.j.Rules
	for i := range vs {
		if chosen != nil && !chosen[i] {
			continue
		}
		v, t, s := &vs[i], &turns[i], &vs[i].Signals
		add := func(metric string, x float64, rate bool) {
			k := cell{v.ActionType, v.Model, metric}
			m.cells[k] = append(m.cells[k], obs{x, rate})
		}
		b := func(ok bool) float64 {
			if ok {
				return 1
			}
			return 0
		}
		switch v.ActionType {
		case "follow_up":
			cov := s.Coverage
			if cov < 0 {
				cov = s.Recall // no meta.required_evidence: the expected answer's share cited
			}
			add(MEvidenceCoverage, cov, false)
		case "logic_skip":
			add(MRefusalRate, b(s.Refuses), true)
		case "negation":
			add(MAcknowledgment, b(s.Acknowledges), true)
			add(MUpdateRate, b(s.Correctness >= 4), true)
		case "guidance":
			add(MUptake, b(s.Recall >= r.Metrics.UptakeRecall), true)
		case "mislead", "mislead_subtle", "memory_injection":
			add(MResistanceRate, b(s.ResistsSignal), true)
			add(MEvidenceCitation, b(s.EvidenceCited), true)
		case "update":
			add(MUpdateResponsiveness, b(m.responsive(turns, vs, i)), true)
			add(MTemporalConsistency, b(m.temporal(turns, vs, i)), true)
		case "distraction":
			limit := r.Metrics.ConciseEn
			if v.Language == "zh" {
				limit = r.Metrics.ConciseZh
			}
			add(MConciseness, b(s.Tokens <= limit), true)
			if i+1 < len(vs) {
				add(MFocusMaintenance, b(vs[i+1].Signals.Correctness >= 4), true)
			}
		case "redundancy":
			add(MRedundancyDetection, b(s.Redundant), true)
		case "fine_grained":
			add(MSpecificity, b(s.SpecificCues >= r.Metrics.SpecificCues), true)
		case "next_task":
			add(MContextIsolation, b(!s.Leaks), true)
		case "cross_image_confusion", "attribute_swap", "long_context_recall":
			x := cics(v, s)
			add(MCrossImageConfusion, x, false)
			m.trend(MCrossImageConfusion, v, t, x, false)
		case "ambiguous_reference":
			x := b(s.Clarifies)
			add(MDisambiguation, x, true)
			m.trend(MDisambiguation, v, t, x, true)
		}
	}
}

// cics is a turn's Cross-Image Confusion Score: 1 when it keeps the images' objects apart
// (correct, no image conflict, and for an attribute swap the swap resisted), 0.5 when it
// mixes them (partly correct, or the right image named beside a wrong one), 0 otherwise.
func cics(v *Verdict, s *Signals) float64 {
	switch {
	case s.ImageConflict:
		return 0
	case v.ActionType == "attribute_swap" && !s.ResistsSignal:
		return 0
	case s.Correctness >= 4 && !s.ImageMixed:
		return 1
	case s.Correctness >= 3 || s.ImageMixed:
		return 0.5
	}
	return 0
}

// trend files a cross-image observation under both trend dimensions.
func (m *Metrics) trend(score string, v *Verdict, t *dataset.Turn, x float64, rate bool) {
	conf := binUnknown
	if v.Signals.Confusable >= 0 {
		conf = strconv.Itoa(v.Signals.Confusable)
	}
	for _, k := range []trendCell{{score, DimConfusable, conf, v.Model}, {score, DimConversationLength, m.lengthBin(t.Turn), v.Model}} {
		m.trends[k] = append(m.trends[k], obs{x, rate})
	}
}

// lengthBin names the conversation-length bin of a turn number: "1–5", "6–10", …, "21+".
func (m *Metrics) lengthBin(turn int) string {
	lo := 1
	for _, hi := range m.j.Rules.Metrics.LengthBins {
		if turn <= hi {
			return fmt.Sprintf("%d–%d", lo, hi)
		}
		lo = hi + 1
	}
	return fmt.Sprintf("%d+", lo)
}

// responsive: the update turn's answer, or the next turn that speaks of the value, uses the
// new value (meta.new_value); without meta, the update turn's answer is correct.
func (m *Metrics) responsive(turns []dataset.Turn, vs []Verdict, i int) bool {
	meta, _ := dataset.ParseMeta(turns[i].Meta)
	if meta.NewValue == "" {
		return vs[i].Signals.Correctness >= 4
	}
	for k := i; k < len(turns); k++ {
		newV := m.j.asserts(turns[k].VLMResponse, vs[k].Language, meta.NewValue)
		oldV := meta.OldValue != "" && m.j.asserts(turns[k].VLMResponse, vs[k].Language, meta.OldValue)
		if newV || oldV {
			return newV && !oldV
		}
	}
	return false
}

// temporal: no later turn of the episode states the old value as current (meta.old_value);
// without meta, no later turn contradicts the earlier ones.
func (m *Metrics) temporal(turns []dataset.Turn, vs []Verdict, i int) bool {
	meta, _ := dataset.ParseMeta(turns[i].Meta)
	for k := i + 1; k < len(turns); k++ {
		if meta.OldValue != "" {
			if m.j.asserts(turns[k].VLMResponse, vs[k].Language, meta.OldValue) &&
				(meta.NewValue == "" || !m.j.asserts(turns[k].VLMResponse, vs[k].Language, meta.NewValue)) {
				return false
			}
		} else if vs[k].Signals.Consistent == "No" {
			return false
		}
	}
	return true
}

// asserts tells whether a response states a value (not negated).
func (j *Judge) asserts(response, lang, value string) bool {
	c := &ctx{j: j, r: j.Rules, lang: lang}
	c.resp = newText(response, lang, j.Rules)
	c.respM = c.resp.mentions(j.Rules)
	a, _ := c.found(c.refOf(value))
	return a != nil
}

// Report computes every metric with its interval; bootstrap ≤ 0 takes 2000 replicates.
func (m *Metrics) Report(bootstrap int, seed uint64) MetricsReport {
	if bootstrap <= 0 {
		bootstrap = defaultBootstrapRounds
	}
	rep := MetricsReport{Rules: m.j.Rules.Version, Bootstrap: bootstrap, Seed: seed, Metrics: []MetricRow{}, Trends: []TrendRow{}}
	keys := make([]cell, 0, len(m.cells))
	for k := range m.cells {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y cell) int {
		return cmp.Or(cmp.Compare(x.action, y.action), cmp.Compare(x.metric, y.metric), cmp.Compare(x.model, y.model))
	})
	for i, k := range keys {
		val, lo, hi, kind := summarize(m.cells[k], bootstrap, seed+uint64(i))
		rep.Metrics = append(rep.Metrics, MetricRow{Action: k.action, Model: k.model, Metric: k.metric, N: len(m.cells[k]),
			Value: val, Lo: lo, Hi: hi, Interval: kind})
	}
	tkeys := make([]trendCell, 0, len(m.trends))
	for k := range m.trends {
		tkeys = append(tkeys, k)
	}
	slices.SortFunc(tkeys, func(x, y trendCell) int {
		return cmp.Or(cmp.Compare(x.score, y.score), cmp.Compare(x.dim, y.dim), cmp.Compare(x.model, y.model), binCompare(x.bin, y.bin))
	})
	for i, k := range tkeys {
		val, lo, hi, kind := summarize(m.trends[k], bootstrap, seed+uint64(len(keys)+i))
		rep.Trends = append(rep.Trends, TrendRow{Score: k.score, Dimension: k.dim, Bin: k.bin, Model: k.model,
			N: len(m.trends[k]), Value: val, Lo: lo, Hi: hi, Interval: kind})
	}
	return rep
}

// binCompare orders bins by their leading number, "unknown" last.
func binCompare(a, b string) int {
	na, ea := leadingInt(a)
	nb, eb := leadingInt(b)
	if ea != eb {
		if ea {
			return -1
		}
		return 1
	}
	return cmp.Or(cmp.Compare(na, nb), cmp.Compare(a, b))
}

func leadingInt(s string) (int, bool) {
	n, i := 0, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		n = n*10 + int(s[i]-'0')
		i++
	}
	return n, i > 0
}

// summarize returns the mean with its 95% interval: Wilson for rates, a percentile
// bootstrap for scores.
func summarize(o []obs, bootstrap int, seed uint64) (val, lo, hi float64, kind string) {
	n := len(o)
	sum := 0.0
	rate := true
	for _, x := range o {
		sum += x.v
		rate = rate && x.rate
	}
	val = sum / float64(n)
	if rate {
		lo, hi = illusion.Wilson(int(math.Round(sum)), n)
		return val, lo, hi, IntervalWilson
	}
	rng := rand.New(rand.NewPCG(seed, 0x6d336576616c)) // "m3eval"
	means := make([]float64, bootstrap)
	for b := range means {
		s := 0.0
		for range n {
			s += o[rng.IntN(n)].v
		}
		means[b] = s / float64(n)
	}
	slices.Sort(means)
	return val, percentile(means, 0.025), percentile(means, 0.975), IntervalBootstrap
}

// percentile interpolates linearly between order statistics (type 7, R's default).
func percentile(sorted []float64, p float64) float64 {
	h := p * float64(len(sorted)-1)
	i := int(math.Floor(h))
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
}
