package workflow

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/textsafe"
)

type stratumJSON struct {
	Key       []string `json:"key"`
	Available int      `json:"available"`
	Allocated int      `json:"allocated"`
	Drawn     int      `json:"drawn"`
}

type sampleJSON struct {
	Name          string              `json:"name"`
	Size          int                 `json:"size"`
	Seed          int64               `json:"seed"`
	By            []string            `json:"by"`
	Where         map[string][]string `json:"where,omitempty"`
	MinPerStratum int                 `json:"min_per_stratum"`
	CreatedAt     string              `json:"created_at"`
	Assigned      bool                `json:"assigned"`
	Strata        []stratumJSON       `json:"strata"`
}

func toJSON(s *store.SampleInfo) sampleJSON {
	j := sampleJSON{Name: s.Name, Size: s.Size, Seed: s.Seed, By: s.Params.By, Where: s.Params.Where,
		MinPerStratum: s.Params.MinPerStratum, CreatedAt: s.CreatedAt.Format(time.RFC3339), Assigned: s.Assigned,
		Strata: []stratumJSON{}}
	for _, st := range s.Strata {
		j.Strata = append(j.Strata, stratumJSON{st.Key, st.Available, st.Allocated, st.Drawn})
	}
	return j
}

// WriteSample shows one sample: its parameters, then per stratum the turns available,
// allocated and drawn.
func WriteSample(w io.Writer, s *store.SampleInfo, f render.Format) error {
	if f == render.JSON {
		return render.WriteJSON(w, toJSON(s))
	}
	fmt.Fprintf(w, "sample %s: %d turns, seed %d, by %s", textsafe.Line(s.Name), s.Size, s.Seed, textsafe.Line(strings.Join(s.Params.By, ", ")))
	if s.Params.MinPerStratum > 0 {
		fmt.Fprintf(w, ", at least %d per stratum", s.Params.MinPerStratum)
	}
	for k, vs := range s.Params.Where {
		fmt.Fprintf(w, ", where %s in %s", textsafe.Line(k), textsafe.Line(strings.Join(vs, "|")))
	}
	fmt.Fprintf(w, " (%s)\n", s.CreatedAt.Format("2006-01-02 15:04 UTC"))
	headers := append([]string{}, s.Params.By...)
	for i := range headers {
		headers[i] = textsafe.Line(headers[i])
	}
	headers = append(headers, "available", "allocated", "drawn")
	right := map[int]bool{}
	for i := len(s.Params.By); i < len(headers); i++ {
		right[i] = true
	}
	var rows [][]string
	var av, al, dr int
	for _, st := range s.Strata {
		var row []string
		for _, k := range st.Key {
			if k == "" {
				k = "(none)"
			}
			row = append(row, textsafe.Line(k))
		}
		row = append(row, strconv.Itoa(st.Available), strconv.Itoa(st.Allocated), strconv.Itoa(st.Drawn))
		rows = append(rows, row)
		av, al, dr = av+st.Available, al+st.Allocated, dr+st.Drawn
	}
	total := make([]string, len(s.Params.By))
	if len(total) > 0 {
		total[0] = "total"
	}
	rows = append(rows, append(total, strconv.Itoa(av), strconv.Itoa(al), strconv.Itoa(dr)))
	return render.Grid(w, headers, rows, right)
}

// WriteSamples lists the stored samples.
func WriteSamples(w io.Writer, list []store.SampleInfo, f render.Format) error {
	if f == render.JSON {
		out := []sampleJSON{}
		for i := range list {
			out = append(out, toJSON(&list[i]))
		}
		return render.WriteJSON(w, out)
	}
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "no samples yet: m3eval sample --name NAME --n N --by action_type")
		return err
	}
	var rows [][]string
	for _, s := range list {
		assigned := "no"
		if s.Assigned {
			assigned = "yes"
		}
		rows = append(rows, []string{textsafe.Line(s.Name), strconv.Itoa(s.Size), textsafe.Line(strings.Join(s.Params.By, ", ")),
			strconv.FormatInt(s.Seed, 10), strconv.Itoa(len(s.Strata)), assigned, s.CreatedAt.Format("2006-01-02 15:04")})
	}
	return render.Grid(w, []string{"name", "turns", "by", "seed", "strata", "assigned", "created (UTC)"}, rows, map[int]bool{1: true, 3: true, 4: true})
}
