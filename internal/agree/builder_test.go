package agree

import (
	"fmt"
	"testing"
)

// TestGroupedBuilderSameData checks Builder.Grouped (no item look-ups while the ratings
// come one item at a time; the map made when the scores need it) against the ordinary
// builder on the same rows: ratings item by item, then two judges' scores, one judge also
// scoring items nobody rated and skipping some, in and out of the ratings' order.
func TestGroupedBuilderSameData(t *testing.T) {
	fields := []Field{NewOrdinal("q", 1, 2, 3, 4, 5), NewNominal("ok", "Yes", "No")}
	build := func(grouped bool) []FieldData {
		b, err := NewBuilder(fields)
		if err != nil {
			t.Fatal(err)
		}
		b.Grouped = grouped
		for i := 0; i < 40; i++ {
			item := fmt.Sprintf("s%02d", i)
			for r := 0; r < 2+i%2; r++ {
				rater := fmt.Sprintf("r%d", (i+r)%4)
				if err := b.Add(item, rater, "q", fmt.Sprint(1+(i*7+r)%5), Location{}); err != nil {
					t.Fatal(err)
				}
				if i%3 != 0 {
					if err := b.Add(item, rater, "ok", []string{"Yes", "No"}[(i+r)%2], Location{}); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		for i := 0; i < 45; i++ { // s40..s44 were never rated: ignored
			if i%5 == 1 {
				continue
			}
			if err := b.AddScore("gpt", fmt.Sprintf("s%02d", i), "q", fmt.Sprint(1+i%5), Location{}); err != nil {
				t.Fatal(err)
			}
		}
		for i := 39; i >= 0; i -= 2 { // backwards: every look-up misses the sequential guess
			if err := b.AddScore("rules", fmt.Sprintf("s%02d", i), "ok", "Yes", Location{}); err != nil {
				t.Fatal(err)
			}
		}
		d, err := b.Build("test")
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	plain, grouped := build(false), build(true)
	// Printed, not reflect.DeepEqual: the judges' missing scores are NaN.
	if p, g := fmt.Sprintf("%+v", plain), fmt.Sprintf("%+v", grouped); p != g {
		t.Fatalf("Grouped built other data:\nplain   %s\ngrouped %s", p, g)
	}
	if len(plain[0].Items) != 40 || len(plain[0].Judges) != 2 {
		t.Fatalf("%d items, %d judges; want 40 and 2", len(plain[0].Items), len(plain[0].Judges))
	}
}
