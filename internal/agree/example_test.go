package agree_test

import (
	"context"
	"fmt"

	"github.com/m3bench/m3eval/internal/agree"
)

// Example shows the in-memory entry point a caller without CSV files (m3eval score) uses:
// labelled ratings and judge scores go into a Builder, Analyze computes everything.
func Example() {
	b, err := agree.NewBuilder([]agree.Field{
		agree.NewOrdinal("fluency", 1, 2, 3, 4, 5),
		agree.NewNominal("factual", "No", "Yes"),
	})
	if err != nil {
		panic(err)
	}
	ratings := []struct{ item, rater, field, value string }{
		{"t1", "ann", "fluency", "4"}, {"t1", "bob", "fluency", "4"}, {"t1", "ann", "factual", "Yes"},
		{"t2", "ann", "fluency", "2"}, {"t2", "bob", "fluency", "3"}, {"t2", "bob", "factual", "No"},
		{"t3", "ann", "fluency", "5"}, {"t3", "bob", "fluency", "5"}, {"t3", "bob", "factual", "NA"},
	}
	for _, r := range ratings {
		if err := b.Add(r.item, r.rater, r.field, r.value, agree.Location{}); err != nil {
			panic(err)
		}
	}
	for item, score := range map[string]string{"t1": "3.5", "t2": "2", "t3": "4.8"} {
		b.AddScore("judge-x", item, "fluency", score, agree.Location{})
	}
	fields, err := b.Build("")
	if err != nil {
		panic(err)
	}
	res, err := agree.Analyze(context.Background(), fields, agree.Options{})
	if err != nil {
		panic(err)
	}
	// By hand: fluency's coincidences are o44 = o55 = 2, o23 = o32 = 1, so n = 6,
	// D_o = 2, D_e = 36 − (1+1+4+4) = 26 and alpha = 1 − 5·2/26 = 8/13 ≈ 0.6154. factual has
	// no item with two ratings (t3's NA is missing).
	for _, f := range res {
		if x, ok := f.Alpha.Nominal.Float(); ok {
			fmt.Printf("%s: %d items, alpha %.4f\n", f.Field.Name, f.NItems, x)
		} else {
			fmt.Printf("%s: %d items, alpha undefined: %s\n", f.Field.Name, f.NItems, f.Alpha.Nominal.Reason())
		}
	}
	fmt.Println("tau-b vs judge-x:", res[0].Judges[0].KendallTauB)
	// Output:
	// fluency: 3 items, alpha 0.6154
	// factual: 2 items, alpha undefined: no item with 2 or more ratings (no pairable values)
	// tau-b vs judge-x: 1
}
