package render

import (
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/m3bench/m3eval/internal/agree"
)

// Section is one block of a grouped report (m3eval score --by). It holds the results of
// every field over the items of one group, or over all items.
type Section struct {
	// Value is the group's value of the grouping attribute ("mislead" for --by action_type);
	// ignored for the overall section.
	Value   string
	Overall bool
	Results []agree.FieldResult
}

// ScoreInputs describes what m3eval score read, for the "inputs" block of its JSON.
type ScoreInputs struct {
	Database      string
	By            string // "" without grouping
	Annotators    []string
	Judges        []string
	IncludeDrafts bool
	NACategory    bool
	Bootstrap     int
	Seed          uint64
	// CI, Cluster, Adjust and Raters record how intervals and p-values were made.
	CI, Cluster, Adjust, Raters string
}

// WriteSections writes a report of several sections. JSON has the overall fields under
// "fields" (as m3eval agree writes them) and each group's under "groups".<value>."fields".
// The other formats are m3eval agree's, each field's heading naming its group, so that one
// legend and one list of footnotes serve the whole report.
func WriteSections(w io.Writer, secs []Section, in ScoreInputs, o AgreementOptions) error {
	switch o.Format {
	case JSON:
		if o.Matrix == "" {
			return sectionsJSON(w, secs, in)
		}
	case CSV:
		if o.Matrix == "" {
			return sectionsCSV(w, secs, in.By, o.CSV)
		}
	}
	switch o.Format {
	case Markdown, Table, LaTeX, JSON, CSV, "":
		var all []agree.FieldResult
		for _, s := range secs {
			for _, r := range s.Results {
				switch {
				case s.Overall:
				case o.Matrix != "":
					// The matrix gets a row per judge and group ("gpt4o · model = qwen2-vl-7b")
					// under the fields' columns: a judge that favours one model family shows
					// as one row apart. A copy of the judges, so the caller's keep their names.
					r.Judges = slices.Clone(r.Judges)
					for k := range r.Judges {
						r.Judges[k].Judge += " · " + groupLabel(in.By, s.Value)
					}
				default:
					// Only the heading shows the name; a copy, so the caller's results keep theirs.
					r.Field.Name = groupLabel(in.By, s.Value) + " · " + r.Field.Name
				}
				all = append(all, r)
			}
		}
		return WriteAgreement(w, all, o)
	}
	return fmt.Errorf("unknown format %q (table, json, md, csv or latex)", o.Format)
}

// groupLabel names a group in headings: "action_type = mislead".
func groupLabel(by, value string) string {
	if value == "" {
		value = "(none)"
	}
	return by + " = " + value
}

func sectionsJSON(w io.Writer, secs []Section, in ScoreInputs) error {
	var top obj
	top.set("m3eval", "score 1")
	var inputs obj
	inputs.set("database", in.Database)
	inputs.set("annotators", orEmpty(in.Annotators))
	inputs.set("judges", orEmpty(in.Judges))
	inputs.set("include_drafts", in.IncludeDrafts)
	inputs.setStatistics(in.NACategory, nil, in.Bootstrap, in.Seed, in.CI, in.Cluster, in.Adjust, in.Raters)
	inputs.set("by", nullIfEmpty(in.By))
	top.set("inputs", inputs)
	fieldsOf := func(rs []agree.FieldResult) obj {
		fields := obj{}
		for _, r := range rs {
			fields.set(r.Field.Name, fieldJSON(r))
		}
		return fields
	}
	groups := obj{}
	for _, s := range secs {
		if s.Overall {
			top.set("fields", fieldsOf(s.Results))
			continue
		}
		groups.set(s.Value, obj{{"fields", fieldsOf(s.Results)}})
	}
	if in.By != "" {
		top.set("groups", groups)
	}
	return writeJSONIndent(w, top, " ")
}

// sectionsCSV writes the rows of m3eval agree's CSV, each led by the grouping attribute and
// the group's value (both empty for the overall rows).
func sectionsCSV(w io.Writer, secs []Section, by string, co CSVOptions) error {
	cw := NewCSVWriter(w, co)
	cw.Write([]string{"by", "by_value", "field", "group", "statistic", "key", "value", "n", "ci95_lo", "ci95_hi", "se", "undefined_reason", "p", "p_adjusted", "test"})
	num := func(v agree.Value) string {
		if x, ok := v.Float(); ok {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
		return ""
	}
	for _, s := range secs {
		b, val := by, s.Value
		if s.Overall {
			b, val = "", ""
		}
		for _, r := range s.Results {
			for _, x := range rowsOf(r) {
				rec := []string{b, val, r.Field.Name, x.group, x.name, x.key, num(x.v), strconv.Itoa(x.n), "", "", "", x.v.Reason()}
				if x.ci != nil {
					rec[8], rec[9], rec[10] = num(x.ci.Lo), num(x.ci.Hi), num(x.ci.SE)
				}
				rec = append(rec, testCells(x.test, num)...)
				cw.Write(rec)
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
