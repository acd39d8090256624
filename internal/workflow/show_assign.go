package workflow

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// annotatorLoad is one annotator's line of an assignment.
type annotatorLoad struct {
	Name      string   `json:"name"`
	Turns     int      `json:"turns"`
	Gold      int      `json:"gold"`
	Repeats   int      `json:"repeats"`
	Done      int      `json:"done"`
	Started   int      `json:"started"`
	SampleIDs []string `json:"sample_ids"`
	GoldIDs   []string `json:"gold_sample_ids"`
	RepeatIDs []string `json:"repeat_sample_ids"`
}

// Loads sums a campaign per annotator, in name order, and counts the sampled turns every two
// annotators share (gold turns left out: everyone may get the same ones).
func Loads(c *store.Campaign) ([]annotatorLoad, [][]int) {
	var out []annotatorLoad
	idx := map[string]int{}
	byTurn := map[int64][]int{}
	for _, r := range c.Rows {
		i, ok := idx[r.Annotator]
		if !ok {
			i = len(out)
			idx[r.Annotator] = i
			out = append(out, annotatorLoad{Name: r.Annotator, SampleIDs: []string{}, GoldIDs: []string{}, RepeatIDs: []string{}})
		}
		a := &out[i]
		switch r.Kind {
		case store.AssignMain:
			a.Turns++
			a.SampleIDs = append(a.SampleIDs, r.SampleID)
			byTurn[r.TurnID] = append(byTurn[r.TurnID], i)
		case store.AssignGold:
			a.Gold++
			a.GoldIDs = append(a.GoldIDs, r.SampleID)
		case store.AssignRepeat:
			a.Repeats++
			a.RepeatIDs = append(a.RepeatIDs, r.SampleID)
		}
		if r.Status == dataset.StatusDone {
			a.Done++
		}
		if r.Status != "" {
			a.Started++
		}
	}
	pairs := make([][]int, len(out))
	for i := range pairs {
		pairs[i] = make([]int, len(out))
	}
	for _, as := range byTurn {
		for i, x := range as {
			pairs[x][x]++
			for _, y := range as[i+1:] {
				pairs[x][y]++
				pairs[y][x]++
			}
		}
	}
	return out, pairs
}

// WriteCampaign shows an assignment: a load table (sampled turns, gold turns, progress) and
// the matrix of sampled turns every two annotators share. The JSON lists every annotator's
// sample ids.
func WriteCampaign(w io.Writer, c *store.Campaign, warnings []string, f render.Format) error {
	loads, pairs := Loads(c)
	if f == render.JSON {
		type pairJSON struct {
			A      string `json:"a"`
			B      string `json:"b"`
			Shared int    `json:"shared"`
		}
		out := struct {
			Sample     string          `json:"sample"`
			Overlap    int             `json:"overlap"`
			GoldRate   float64         `json:"gold_rate"`
			RepeatRate float64         `json:"repeat_rate"`
			Seed       int64           `json:"seed"`
			AssignedAt string          `json:"assigned_at"`
			Annotators []annotatorLoad `json:"annotators"`
			Pairs      []pairJSON      `json:"pairs"`
			Warnings   []string        `json:"warnings"`
		}{Sample: c.Sample.Name, Annotators: loads, Pairs: []pairJSON{}, Warnings: append([]string{}, warnings...)}
		if c.Settings != nil {
			out.Overlap, out.GoldRate, out.RepeatRate, out.Seed = c.Settings.Overlap, c.Settings.GoldRate, c.Settings.RepeatRate, c.Settings.Seed
			out.AssignedAt = c.Settings.AssignedAt.Format(time.RFC3339)
		}
		if out.Annotators == nil {
			out.Annotators = []annotatorLoad{}
		}
		for i := range loads {
			for j := i + 1; j < len(loads); j++ {
				out.Pairs = append(out.Pairs, pairJSON{loads[i].Name, loads[j].Name, pairs[i][j]})
			}
		}
		return render.WriteJSON(w, out)
	}
	if c.Settings == nil {
		_, err := fmt.Fprintf(w, "sample %s is not assigned yet: m3eval assign --sample %s --annotators A,B,C --overlap 2\n", textsafe.Line(c.Sample.Name), textsafe.Line(c.Sample.Name))
		return err
	}
	fmt.Fprintf(w, "campaign %s: %d turns, overlap %d", textsafe.Line(c.Sample.Name), c.Sample.Size, c.Settings.Overlap)
	if c.Settings.GoldRate > 0 {
		fmt.Fprintf(w, ", gold rate %g", c.Settings.GoldRate)
	}
	if c.Settings.RepeatRate > 0 {
		fmt.Fprintf(w, ", repeat share %g", c.Settings.RepeatRate)
	}
	fmt.Fprintf(w, ", assigned %s\n", c.Settings.AssignedAt.Format("2006-01-02 15:04 UTC"))
	var rows [][]string
	for _, l := range loads {
		rows = append(rows, []string{textsafe.Line(l.Name), strconv.Itoa(l.Turns), strconv.Itoa(l.Gold), strconv.Itoa(l.Repeats),
			strconv.Itoa(l.Turns + l.Gold + l.Repeats), strconv.Itoa(l.Started), strconv.Itoa(l.Done)})
	}
	if err := render.Grid(w, []string{"annotator", "turns", "gold", "repeats", "queue", "started", "done"}, rows,
		map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true}); err != nil {
		return err
	}
	fmt.Fprintln(w, "sampled turns shared by each pair (diagonal: the annotator's own):")
	headers := []string{""}
	right := map[int]bool{}
	for i, l := range loads {
		headers = append(headers, textsafe.Line(l.Name))
		right[i+1] = true
	}
	rows = nil
	for i, l := range loads {
		row := []string{textsafe.Line(l.Name)}
		for j := range loads {
			row = append(row, strconv.Itoa(pairs[i][j]))
		}
		rows = append(rows, row)
	}
	if err := render.Grid(w, headers, rows, right); err != nil {
		return err
	}
	for _, wn := range warnings {
		fmt.Fprintln(w, "warning: "+textsafe.Line(wn))
	}
	return nil
}
