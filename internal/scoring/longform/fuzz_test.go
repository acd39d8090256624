package longform

import (
	"context"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/agree"
)

// FuzzLoad feeds arbitrary ratings and score files through the reader and every statistic:
// whatever the bytes, the result is an error or a report, never a panic.
func FuzzLoad(f *testing.F) {
	f.Add("item,rater,field,value\na,r,f,1\na,s,f,2\nb,r,f,NA\n", "item,field,value\na,f,1.5\n")
	f.Add("item,rater,field,value\n\"x\ny\",r,g,Yes\n\"x\ny\",s,g,No\n", "judge,item,field,value\nj,\"x\ny\",g,Yes\n")
	f.Add("value,item,field,rater\n-3,a,f,r\n9,a,f,s\n", "")
	f.Fuzz(func(t *testing.T, ratings, scores string) {
		b, _ := agree.NewBuilder(nil)
		if err := ReadRatings(b, "r.csv", strings.NewReader(ratings)); err != nil {
			return
		}
		if scores != "" {
			if err := ReadScores(b, "a.csv", strings.NewReader(scores)); err != nil {
				return
			}
		}
		fields, err := b.Build("r.csv")
		if err != nil {
			return
		}
		if _, err := agree.Analyze(context.Background(), fields, agree.Options{Bootstrap: 3, Seed: 1}); err != nil {
			t.Fatalf("valid input rejected by Analyze: %v", err)
		}
	})
}
