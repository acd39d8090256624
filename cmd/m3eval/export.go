package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/csvout"
	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/labeled"
	"github.com/m3bench/m3eval/internal/store"
)

func newExportCmd(g *globalOptions) *cobra.Command {
	var (
		o      store.ExportOptions
		format string
		output string
		co     csvout.Options
	)
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export labels in the annotation guide's JSON format (or JSONL, CSV)",
		Long: `Export writes each labeled turn with its human_annotation: the rubric's fields (NA as
null), annotator, annotated_at, active_seconds, rubric_version and flagged. With several
annotators and no --annotator, each turn carries human_annotations: [...]. Drafts are left
out unless --include-drafts, which marks them "status": "draft".`,
		Example: `  m3eval export -o labels.json
  m3eval export --annotator alice --format jsonl -o alice.jsonl
  m3eval export --format csv --include-drafts > all.csv`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !contains(labeled.Formats, format) {
				return usageErrorf("--format %q: use one of %s", format, strings.Join(labeled.Formats, ", "))
			}
			if err := g.mustExist(); err != nil {
				return err
			}
			r, err := g.loadRubric()
			if err != nil {
				return err
			}
			s, err := g.openStore(cmd.Context(), nil, store.Options{ReadOnly: true})
			if err != nil {
				return err
			}
			defer s.Close()
			names, err := s.ExportAnnotators(cmd.Context(), o)
			if err != nil {
				return err
			}
			if o.Annotator != "" && len(names) == 0 {
				return fmt.Errorf("export: %s has no labels to export%s", o.Annotator, draftHint(o))
			}
			return writeOutput(cmd, output, func(w io.Writer, _ bool) error {
				lw, err := labeled.NewWriter(w, labeled.Options{Format: format, Rubric: r, Multi: len(names) > 1, CSV: co})
				if err != nil {
					return err
				}
				if err := s.Export(cmd.Context(), o, func(l *dataset.Labeled) error { return lw.Write(l) }); err != nil {
					return err
				}
				return lw.Close()
			})
		},
	}
	cmd.Flags().StringVar(&o.Annotator, "annotator", "", "export only this annotator's labels")
	cmd.Flags().BoolVar(&o.IncludeDrafts, "include-drafts", false, "include incomplete labels, marked \"status\": \"draft\"")
	cmd.Flags().StringVar(&format, "format", "json", "json, jsonl or csv")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to FILE instead of standard output")
	csvFlags(cmd.Flags(), &co)
	return cmd
}

func draftHint(o store.ExportOptions) string {
	if o.IncludeDrafts {
		return ""
	}
	return " (drafts are left out without --include-drafts)"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
