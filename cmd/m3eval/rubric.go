package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/plural"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// newRubricCmd is m3eval rubric check|show: a lab's rubric is an input like its data, so
// it can be checked before an import and the built-in one copied as a starting point.
func newRubricCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rubric",
		Short: "Check a rubric file, or print the built-in M3Bench rubric",
		Long: `A rubric file says which fields an annotation has, their kinds (scale, choice, text),
their labels in English and Chinese, and the rules that fix a field to NA on some turns.
Every command takes one with --rubric FILE. docs/rubric.md describes the format.`,
		Example: `  m3eval rubric show > my-rubric.json
  m3eval rubric check my-rubric.json`,
		Args: exactArgs(0),
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "check FILE",
		Short: "Check a rubric file and summarize its fields",
		Long: `check reads a rubric file as every command would, and prints its fields, or the
first problem with its line and field.`,
		Example: `  m3eval rubric check my-rubric.json`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := rubric.Load(args[0], os.Stdin, nil)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "%s: rubric %s, %s, version %s\n", textsafe.Line(args[0]), textsafe.Line(r.Name), plural.N(len(r.Fields), "field"), r.Version)
			for _, f := range r.Fields {
				what := string(f.Kind)
				switch f.Kind {
				case rubric.KindScale:
					what = fmt.Sprintf("scale %d–%d", f.Min, f.Max)
				case rubric.KindChoice:
					var vs []string
					for _, c := range f.Choices {
						vs = append(vs, c.Value)
					}
					what = "choice " + strings.Join(vs, "/")
				}
				req := "optional"
				if f.Required {
					req = "required"
				}
				extra := ""
				if len(f.Fixed) > 0 {
					extra = fmt.Sprintf(", %d NA rules", len(f.Fixed))
				}
				fmt.Fprintf(out, "  %-24s %s, %s%s\n", textsafe.Line(f.Name), what, req, extra)
			}
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:     "show",
		Short:   "Print the built-in M3Bench rubric, as a starting point for your own",
		Example: `  m3eval rubric show > my-rubric.json`,
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(annotations.DefaultRubric)
			return err
		},
	})
	return cmd
}
