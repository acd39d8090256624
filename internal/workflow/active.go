package workflow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/judgerun"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/sample"
	"github.com/m3bench/m3eval/internal/scoring"
	"github.com/m3bench/m3eval/internal/store"
)

// ActiveOptions are the options of m3eval sample --active.
type ActiveOptions struct {
	Name  string
	N     int
	Seed  int64
	Judge string
	Mix   float64
}

// uncertainty is what sample --active reads of a turn: per field, the judges' scores on a
// 0–1 scale.
type uncertainty struct {
	judge    map[string]float64   // field → the chosen judge's score
	others   map[string][]float64 // field → every judge's score (the chosen one included)
	fallback map[string]bool      // field → the rule judge scored it by a fallback rule
}

// fallbackRules are the rule judge's rules (internal/judge) that fire when no clearer rule
// did: a token-overlap score, a hedged answer, no reasoning markers, no cue of accepting or
// rejecting a false premise, nothing earlier to compare with.
var fallbackRules = map[string]bool{
	"correctness.token_f": true, "correctness.hedged": true,
	"reasoning.no_markers": true, "reasoning.details_only": true,
	"misleading.no_cue": true, "misleading.hedge_cue": true, "misleading.hedges_toward_false": true,
	"consistency.nothing_to_compare": true,
}

// Uncertainty is how unsure the judges are about a turn, from 0 to 1: over the rubric's
// scale and Yes/No fields the judge scored, the mean of the larger of two signals: the
// spread of all judges' scores (the judges disagree) and how close the chosen judge's score
// is to the middle of the scale (a 3 of 1–5, a continuous 0.5 for Yes/No: the judge could
// not decide); 1 where the rule judge scored the field by a fallback rule. A model judge's
// hedging rationale is not read yet (see docs/statistics.md).
func (u *uncertainty) value() float64 {
	var sum float64
	n := 0
	for f, x := range u.judge {
		lo, hi := x, x
		for _, y := range u.others[f] {
			lo, hi = math.Min(lo, y), math.Max(hi, y)
		}
		sig := math.Max(hi-lo, 1-math.Abs(2*x-1))
		if u.fallback[f] {
			sig = 1
		}
		sum += sig
		n++
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// ActiveSample draws a sample of N of the turns the judge scored, each with a probability
// that grows with the judges' uncertainty about it (sample.Inclusion, mixed with uniform by
// Mix), by a systematic draw that includes each turn with exactly that probability, and
// stores it with every drawn turn's probability (m3eval estimate --sample weights by it).
func ActiveSample(ctx context.Context, st *store.Store, r *rubric.Rubric, o ActiveOptions) (*store.SampleInfo, error) {
	if strings.TrimSpace(o.Name) == "" {
		return nil, usagef("--name is required")
	}
	if o.N <= 0 {
		return nil, usagef("--n %d: the sample needs at least one turn", o.N)
	}
	if _, err := st.Sample(ctx, o.Name); err == nil {
		return nil, fmt.Errorf("sample %q exists already (see m3eval sample --show %s); choose another --name", o.Name, o.Name)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	// The one "no such judge" message of score and report.
	if _, err := scoring.ChooseJudges(ctx, st, []string{o.Judge}); err != nil {
		return nil, err
	}
	// Scale fields map onto 0–1; Yes/No fields to 1 and 0 (a continuous score as given).
	scale := map[string]func(string) (float64, bool){}
	var fields []string
	for _, f := range r.Fields {
		f := f
		switch {
		case f.Kind == rubric.KindScale && f.Max > f.Min:
			scale[f.Name] = func(s string) (float64, bool) {
				v, err := strconv.ParseFloat(s, 64)
				return (v - float64(f.Min)) / float64(f.Max-f.Min), err == nil
			}
		case f.Kind == rubric.KindChoice:
			scale[f.Name] = func(s string) (float64, bool) {
				switch strings.ToLower(s) {
				case "yes":
					return 1, true
				case "no":
					return 0, true
				}
				v, err := strconv.ParseFloat(s, 64)
				return v, err == nil && v >= 0 && v <= 1
			}
		default:
			continue
		}
		fields = append(fields, f.Name)
	}
	var ids []int64
	turns := map[int64]*uncertainty{}
	err := st.StreamTurnScores(ctx, fields, func(s *store.TurnScore) error {
		v, ok := scale[s.Field](s.Value)
		if !ok {
			return nil // NA
		}
		u := turns[s.TurnID]
		if u == nil {
			u = &uncertainty{judge: map[string]float64{}, others: map[string][]float64{}}
			turns[s.TurnID] = u
			ids = append(ids, s.TurnID)
		}
		if s.Judge == o.Judge {
			u.judge[s.Field] = v
		}
		u.others[s.Field] = append(u.others[s.Field], v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The rule judge's fallback rules: where no rule found a clear signal, the judge is least
	// sure. The rules are re-run in memory with the current rule set.
	if rulesJudge, err := st.JudgeIsRuleJudge(ctx, o.Judge); err != nil {
		return nil, err
	} else if rulesJudge {
		j, err := judgerun.NewJudge(r, "")
		if err != nil {
			return nil, err
		}
		err = st.StreamEpisodes(ctx, store.TurnFilter{}, func(ep []dataset.Turn, tids []int64, _ []bool) error {
			vs, err := j.Episode(ep)
			if err != nil {
				return err
			}
			for i, v := range vs {
				u := turns[tids[i]]
				if u == nil {
					continue
				}
				for _, val := range v.Values {
					if fallbackRules[val.Rule] {
						if u.fallback == nil {
							u.fallback = map[string]bool{}
						}
						u.fallback[val.Field] = true
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	// The population: turns the judge scored on at least one field.
	pop := ids[:0:0]
	var unc []float64
	for _, id := range ids {
		if len(turns[id].judge) > 0 {
			pop = append(pop, id)
			unc = append(unc, turns[id].value())
		}
	}
	if len(pop) == 0 {
		return nil, fmt.Errorf("sample %s: judge %s scored no turn on a scale or Yes/No field", o.Name, o.Judge)
	}
	if o.N > len(pop) {
		// Not a usage error: the command line is well formed, the data has fewer turns.
		return nil, fmt.Errorf("sample %s: --n %d, but judge %s scored only %d turns", o.Name, o.N, o.Judge, len(pop))
	}
	pi, err := sample.Inclusion(unc, o.N, o.Mix)
	if err != nil {
		return nil, fmt.Errorf("sample %s: %w", o.Name, err)
	}
	drawn := sample.DrawSystematic(pi, rand.New(rand.NewPCG(uint64(o.Seed), 0x6163746976650000))) // "active"
	stratum := sample.Stratum{Key: []string{}, Available: len(pop), Allocated: o.N, Drawn: len(drawn)}
	for _, i := range drawn {
		stratum.Items = append(stratum.Items, pop[i])
		stratum.Inclusion = append(stratum.Inclusion, pi[i])
	}
	info := store.SampleInfo{Name: o.Name, Seed: o.Seed, Size: len(drawn),
		Params: store.SampleParams{Active: &store.ActiveParams{Judge: o.Judge, Mix: o.Mix}}}
	if err := st.SaveSample(ctx, info, []sample.Stratum{stratum}); err != nil {
		return nil, err
	}
	saved, err := st.Sample(ctx, o.Name)
	if err != nil {
		return nil, err
	}
	saved.Strata[0].Inclusion = stratum.Inclusion
	return saved, nil
}

// writeActive writes what an active sample drew and how.
func writeActive(w io.Writer, info *store.SampleInfo, f render.Format) error {
	a := info.Params.Active
	lo, hi, avail := 1.0, 0.0, 0
	for _, st := range info.Strata {
		avail += st.Available
		for _, p := range st.Inclusion {
			lo, hi = math.Min(lo, p), math.Max(hi, p)
		}
	}
	if f == render.JSON {
		return render.WriteJSON(w, map[string]any{"name": info.Name, "size": info.Size, "seed": info.Seed, "available": avail,
			"active": map[string]any{"judge": a.Judge, "mix": a.Mix}, "inclusion_probability": map[string]float64{"min": lo, "max": hi},
			"created_at": info.CreatedAt.Format(time.RFC3339)})
	}
	_, err := fmt.Fprintf(w, `sample %s: %d of %d turns, seed %d, drawn actively (%s)
Turns judge %s is less certain about (judges disagree, a mid-scale score, a fallback rule) were
more likely drawn: inclusion probabilities from %.3f to %.3f, recorded with each turn.
Label them (m3eval assign --sample %s), then m3eval estimate --judge %s --sample %s
weights each label by 1/probability, which keeps the estimate unbiased.
`, info.Name, info.Size, avail, info.Seed, info.CreatedAt.Format("2006-01-02 15:04 UTC"), a.Judge, lo, hi, info.Name, a.Judge, info.Name)
	return err
}
