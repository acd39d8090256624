package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/m3bench/m3eval/internal/docscheck"
)

// TestDocumentedCommandsParse: every m3eval command in a ```sh block of README.md and
// docs/*.md parses with the current commands and flags: the command exists, every flag does,
// enumerated values are valid ones, and the arguments are as many as the command takes. A
// renamed flag or a dropped value fails here, not in a reader's terminal (issue #29).
func TestDocumentedCommandsParse(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"../../README.md"}, files...)
	cmds, err := docscheck.Commands(files, "m3eval")
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) < 40 {
		t.Fatalf("found only %d m3eval commands in the documentation", len(cmds))
	}
	for _, c := range cmds {
		if err := parseCommandLine(c.Args); err != nil {
			t.Errorf("%s\n\t%v", c, err)
		}
	}
}

// parseCommandLine parses args as m3eval would, without running anything.
func parseCommandLine(args []string) error {
	for i, a := range args {
		if a == docscheck.Unknown {
			args[i] = "x" // a word the shell computes: a file name, as far as parsing goes
		}
	}
	root := newRootCmd()
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	cmd.InitDefaultHelpFlag()
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	if h, _ := cmd.Flags().GetBool("help"); h {
		return nil
	}
	if !cmd.Runnable() && len(cmd.Flags().Args()) > 0 {
		return fmt.Errorf("%s runs nothing itself: %q is none of its commands", cmd.CommandPath(), cmd.Flags().Args()[0])
	}
	return cmd.ValidateArgs(cmd.Flags().Args())
}
