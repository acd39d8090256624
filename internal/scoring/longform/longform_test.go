package longform

import (
	"errors"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/agree"
)

func build(t *testing.T, schema []agree.Field, ratings, scores string) ([]agree.FieldData, error) {
	t.Helper()
	b, err := agree.NewBuilder(schema)
	if err != nil {
		t.Fatal(err)
	}
	if err := ReadRatings(b, "ratings.csv", strings.NewReader(ratings)); err != nil {
		return nil, err
	}
	if scores != "" {
		if err := ReadScores(b, "auto.csv", strings.NewReader(scores)); err != nil {
			return nil, err
		}
	}
	return b.Build("ratings.csv")
}

func TestReadRatingsQuotingAndOrder(t *testing.T) {
	// BOM, columns in another order plus an extra one, RFC 4180 quotes with a comma and a
	// newline, UTF-8 names, padded values, all three forms of missing.
	in := "\ufeffvalue,field,note,item,rater\n" +
		"4,fluency,x,\"story, one\",Zoë\n" +
		" 5 ,fluency,\"two\nlines\",\"story, one\",李\n" +
		"NA,fluency,,s2,Zoë\n" +
		",fluency,,s2,李\n" +
		"3,fluency,,s2,ghost\n"
	fields, err := build(t, nil, in, "")
	if err != nil {
		t.Fatal(err)
	}
	d := fields[0]
	if d.Field.Type != agree.Ordinal || len(d.Field.Categories) != 5 {
		t.Fatalf("field %+v, want ordinal 1..5", d.Field)
	}
	if got := strings.Join(d.Items, "|"); got != "story, one|s2" {
		t.Fatalf("items %q", got)
	}
	if got := strings.Join(d.Raters, "|"); got != "Zoë|李|ghost" {
		t.Fatalf("raters %q", got)
	}
	if d.Ratings.At(0, 1) != 4 || d.Ratings.At(1, 0) != agree.Missing || d.Ratings.At(1, 2) != 2 {
		t.Fatalf("matrix %v", d.Ratings.Codes)
	}
}

func TestReadErrorsNameFileLineColumn(t *testing.T) {
	schema := []agree.Field{agree.NewOrdinal("fluency", 1, 2, 3, 4, 5), agree.NewNominal("factual", "No", "Yes")}
	for _, tc := range []struct{ name, ratings, scores, want string }{
		{"outside", "item,rater,field,value\n\"a\nb\",r,fluency,2\nc,r,fluency,7\n", "",
			`ratings.csv:4: value: "7" is not a category of fluency (1..5)`},
		{"case-sensitive", "item,rater,field,value\na,r,factual,yes\n", "",
			`ratings.csv:2: value: "yes" is not a category of factual (No, Yes)`},
		{"duplicate", "item,rater,field,value\na,r,fluency,2\na,s,fluency,2\na,r,fluency,3\n", "",
			`ratings.csv:4: item: duplicate rating of item "a" by r in field fluency (first on line 2)`},
		{"missing column", "item,rater,value\n", "", `ratings.csv:1: header: no column "field"`},
		{"short record", "item,rater,field,value\na,r\n", "", `ratings.csv:2: field: missing`},
		{"bad quote", "item,rater,field,value\na,r,fluency,\"2\n", "", `ratings.csv:2:`},
		{"duplicate score", "item,rater,field,value\na,r,fluency,2\n", "item,field,value\na,fluency,2\na,fluency,3\n",
			`auto.csv:3: item: duplicate score for item "a", field fluency (first on line 2)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := build(t, schema, tc.ratings, tc.scores)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	_, err := build(t, schema, "item,rater,field,value\na,r,fluency,9\n", "")
	if !errors.Is(err, agree.ErrInput) {
		t.Fatalf("%v is not ErrInput", err)
	}
}

func TestDuplicateMissingIsNotAnError(t *testing.T) {
	// Only duplicate non-missing ratings are errors: a missing row next to a value is fine.
	fields, err := build(t, nil, "item,rater,field,value\na,r,f,2\na,r,f,NA\na,r,f,\n", "")
	if err != nil || fields[0].Ratings.At(0, 0) != 1 {
		t.Fatalf("%v %v", err, fields)
	}
}

func TestNACategory(t *testing.T) {
	b, _ := agree.NewBuilder(nil)
	b.NACategory = true
	in := "item,rater,field,value\na,r,ok,NA\na,s,ok,Yes\nb,r,ok,\n"
	if err := ReadRatings(b, "r.csv", strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	fields, err := b.Build("r.csv")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(fields[0].Field.Categories, ","); got != "NA,Yes" || len(fields[0].Items) != 1 {
		t.Fatalf("categories %q, items %v", got, fields[0].Items)
	}
}

func TestScoresWithJudgeColumn(t *testing.T) {
	fields, err := build(t, nil, "item,rater,field,value\na,r,f,2\nb,r,f,3\n",
		"judge,item,field,value\nm1,a,f,2.5\nm2,a,f,4\nm2,b,f,NA\nm1,zzz,f,1\n")
	if err != nil {
		t.Fatal(err)
	}
	js := fields[0].Judges
	if len(js) != 2 || js[0].Name != "m1" || js[1].Name != "m2" {
		t.Fatalf("judges %+v", js)
	}
	if !js[0].Present[0] || js[0].Num[0] != 2.5 || js[0].Code[0] != agree.Missing || js[1].Code[0] != 3 || js[1].Present[1] {
		t.Fatalf("scores %+v", js)
	}
}

func TestParseSchema(t *testing.T) {
	fs, err := ParseSchema("s.json", []byte(`{"fields":{"q":{"type":"ordinal","categories":["1",2,3]},"y":{"type":"nominal","categories":["No","Yes"]}}}`))
	if err != nil || len(fs) != 2 {
		t.Fatal(err, fs)
	}
	for _, bad := range []string{`{"fields":{"q":{"type":"ordinal","categories":[1.5]}}}`, `{"fields":{"q":{"type":"ratio"}}}`,
		`{"fields":{"q":{"type":"nominal","categories":["a","a"]}}}`} {
		if _, err := ParseSchema("s.json", []byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
