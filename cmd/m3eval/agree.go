package main

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/agree/longform"
	"github.com/m3bench/m3eval/internal/csvout"
	"github.com/m3bench/m3eval/internal/report"
)

type agreeOptions struct {
	csv                  csvout.Options // --raw, --excel
	auto, schema, levels string
	bootstrap            int
	seed                 uint64
	naCategory           bool
	format               string
	output               string
}

func newAgreeCmd() *cobra.Command {
	o := &agreeOptions{}
	cmd := &cobra.Command{
		Use:   "agree RATINGS.csv",
		Short: "Inter-rater agreement and human-vs-automatic correlation from long-form CSV files",
		Long: `agree reads ratings in long form (CSV header item,rater,field,value) and computes, for
every field: pairwise percent agreement and Cohen's kappas, Fleiss' kappa, Krippendorff's
alpha, Gwet's AC1/AC2, percent agreements and ICCs; with --auto (item,field,value, or
item,judge,field,value for several judges) the correlations of the item's mean human rating
with each judge's score and the judge's agreement with the majority label.

Empty values and NA are missing (--na-category keeps NA as a category of nominal fields;
in ordinal fields NA stays missing). Without --schema a field whose values are all integers is
ordinal 1..5 (min..max if outside), any other field nominal. Undefined statistics are shown
as — (null in JSON) with the reason, never as 0, 1 or NaN.

--levels ITEMS.csv (header item,system,segment; either grouping column may be left out) adds
system-level correlations (the mean per system of the item means and scores) and
segment-level ones (one coefficient per segment over its items, averaged over the segments
where it is defined), as in story- and summary-level meta-evaluations.`,
		Example: `  m3eval agree ratings.csv --auto auto.csv --schema schema.json
  m3eval agree ratings.csv --bootstrap 1000 --seed 7 --format md -o agreement.md`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runAgree(cmd, args[0], o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.auto, "auto", "", "automatic scores: CSV item,field,value (optionally with a judge column)")
	f.StringVar(&o.schema, "schema", "", "field types and categories: JSON {\"fields\": {NAME: {\"type\": \"ordinal\"|\"nominal\", \"categories\": [...]}}}")
	f.StringVar(&o.levels, "levels", "", "item groups for system- and segment-level correlations: CSV item,system,segment")
	f.IntVar(&o.bootstrap, "bootstrap", 0, "bootstrap replicates for 95% intervals and standard errors (0: none)")
	f.Uint64Var(&o.seed, "seed", 12345, "bootstrap seed; the same seed gives the same intervals on any machine")
	f.BoolVar(&o.naCategory, "na-category", false, "treat NA as a category of nominal fields instead of missing")
	f.StringVar(&o.format, "format", "table", "output format: table, json, md or csv")
	f.StringVarP(&o.output, "output", "o", "", "write to FILE instead of standard output")
	csvFlags(f, &o.csv)
	return cmd
}

func runAgree(cmd *cobra.Command, ratings string, o *agreeOptions) error {
	switch report.Format(o.format) {
	case report.Table, report.JSONFmt, report.Markdown, report.CSV:
	default:
		return usageErrorf("--format %q: use table, json, md or csv", o.format)
	}
	if o.bootstrap < 0 {
		return usageErrorf("--bootstrap %d: the number of replicates cannot be negative", o.bootstrap)
	}
	if err := oneStdin(ratings, o.auto, o.schema, o.levels); err != nil {
		return err
	}
	if o.levels != "" && o.auto == "" {
		return usageErrorf("--levels needs --auto: it groups the correlations with automatic scores")
	}
	// Reading millions of rows builds a large heap that lives until the end; collecting at 5×
	// the live heap instead of 2× (soft-capped below 1 GB) halves the time spent in the
	// collector on the 3,000,000-row benchmark.
	defer debug.SetGCPercent(debug.SetGCPercent(agree.GCPercent))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(agree.MemoryLimit))
	fields, err := longform.Load(longform.Options{Ratings: ratings, Auto: o.auto, Schema: o.schema, NACategory: o.naCategory})
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	results, err := agree.Analyze(ctx, fields, agree.Options{Bootstrap: o.bootstrap, Seed: o.seed})
	if err != nil {
		return err
	}
	if o.levels != "" {
		if err := addLevels(o.levels, fields, results); err != nil {
			return err
		}
	}
	in := report.Inputs{Ratings: filepath.Base(ratings), Auto: base(o.auto), Schema: base(o.schema),
		NACategory: o.naCategory, Bootstrap: o.bootstrap, Seed: o.seed}
	return writeOutput(cmd, o.output, func(w io.Writer, color bool) error {
		return report.Write(w, results, report.Options{Format: report.Format(o.format), Color: color, Bootstrap: o.bootstrap, Inputs: in, CSV: o.csv})
	})
}

func base(p string) string {
	if p == "" {
		return ""
	}
	return filepath.Base(p)
}

// addLevels reads the item groups and adds system- and segment-level correlations to every
// judge of every ordinal field.
func addLevels(path string, fields []agree.FieldData, results []agree.FieldResult) error {
	f, name, err := openInput(path, os.Stdin)
	if err != nil {
		return err
	}
	defer f.Close()
	name = filepath.Base(name)
	r := csv.NewReader(bufio.NewReader(f))
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimPrefix(strings.TrimSpace(h), "\ufeff")] = i
	}
	if _, ok := col["item"]; !ok {
		return fmt.Errorf("%s:1: header: no column \"item\" (the header must have item and system and/or segment)", name)
	}
	sysCol, hasSys := col["system"]
	segCol, hasSeg := col["segment"]
	if !hasSys && !hasSeg {
		return fmt.Errorf("%s:1: header: neither a system nor a segment column", name)
	}
	system, segment := map[string]string{}, map[string]string{}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		line, _ := r.FieldPos(0)
		item := strings.TrimSpace(rec[col["item"]])
		if _, dup := system[item]; dup {
			return fmt.Errorf("%s:%d: item: %q is listed twice", name, line, item)
		}
		get := func(c int) string {
			if c < len(rec) {
				return strings.TrimSpace(rec[c])
			}
			return ""
		}
		system[item], segment[item] = "", ""
		if hasSys {
			system[item] = get(sysCol)
		}
		if hasSeg {
			segment[item] = get(segCol)
		}
	}
	ids := func(items []string, m map[string]string) []int {
		num := map[string]int{}
		out := make([]int, len(items))
		for i, it := range items {
			g := m[it]
			if g == "" {
				out[i] = -1
				continue
			}
			id, ok := num[g]
			if !ok {
				id = len(num)
				num[g] = id
			}
			out[i] = id
		}
		return out
	}
	for fi := range fields {
		d := &fields[fi]
		if d.Field.Type != agree.Ordinal {
			continue
		}
		var sys, seg []int
		if hasSys {
			sys = ids(d.Items, system)
		}
		if hasSeg {
			seg = ids(d.Items, segment)
		}
		for ji, j := range d.Judges {
			results[fi].Judges[ji].SystemLevel, results[fi].Judges[ji].SegmentLevel = agree.Levels(d, j, sys, seg)
		}
	}
	return nil
}
