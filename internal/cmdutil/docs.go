package cmdutil

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// NewDocsCmd returns the hidden command `gen-docs DIR` (run by `make docs`) that writes the
// Markdown reference of the root's commands to DIR, one page per command. The pages are the
// same on every machine: no date line, and each flag named in stable shows the default given
// there instead of one the environment chose (--db's comes from $M3EVAL_DB).
func NewDocsCmd(stable map[string]string) *cobra.Command {
	return &cobra.Command{
		Use:    "gen-docs DIR",
		Short:  "Write the CLI reference (Markdown) to DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return GenDocs(cmd.Root(), args[0], stable)
		},
	}
}

// GenDocs writes the reference of root's commands to dir, replacing the pages of an earlier
// run (a removed command's page goes too).
func GenDocs(root *cobra.Command, dir string, stable map[string]string) error {
	for name, def := range stable {
		f := root.PersistentFlags().Lookup(name)
		if f == nil {
			return fmt.Errorf("gen-docs: no persistent flag --%s", name)
		}
		f.DefValue = def
	}
	disableDateTag(root)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("gen-docs: %w", err)
	}
	old, err := filepath.Glob(filepath.Join(dir, root.Name()+"*.md"))
	if err != nil {
		return fmt.Errorf("gen-docs: %w", err)
	}
	for _, p := range old {
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("gen-docs: %w", err)
		}
	}
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		return fmt.Errorf("gen-docs %s: %w", dir, err)
	}
	return nil
}

func disableDateTag(c *cobra.Command) {
	c.DisableAutoGenTag = true
	for _, sub := range c.Commands() {
		disableDateTag(sub)
	}
}

// DocsDiff compares the reference pages in want (e.g. docs/cli) with those in got (freshly
// generated) and describes every difference; "" means they are the same.
func DocsDiff(want, got string) (string, error) {
	wantPages, err := readPages(want)
	if err != nil {
		return "", err
	}
	gotPages, err := readPages(got)
	if err != nil {
		return "", err
	}
	var diffs []string
	for name, body := range gotPages {
		switch old, ok := wantPages[name]; {
		case !ok:
			diffs = append(diffs, name+" is missing")
		case old != body:
			diffs = append(diffs, name+" differs")
		}
	}
	for name := range wantPages {
		if _, ok := gotPages[name]; !ok {
			diffs = append(diffs, name+" documents no command")
		}
	}
	slices.Sort(diffs)
	return strings.Join(diffs, "\n"), nil
}

func readPages(dir string) (map[string]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return nil, err
	}
	pages := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		pages[filepath.Base(p)] = string(b)
	}
	return pages, nil
}
