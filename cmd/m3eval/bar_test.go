package main

import (
	"io"
	"strings"
	"testing"

	"github.com/creack/pty"
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/progress"
)

// TestNewBar: --quiet, a persistent flag of the root, silences the bar of a subcommand
// (cmdIO reads it from the command's flags).
// (Moved from cmdutil, which imports no progress now.)
func TestNewBar(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Fatal(err)
		}
		read := make(chan string)
		go func() { b, _ := io.ReadAll(ptmx); read <- string(b) }()
		root := &cobra.Command{Use: "m", SilenceErrors: true, SilenceUsage: true}
		root.PersistentFlags().BoolP("quiet", "q", false, "")
		root.AddCommand(&cobra.Command{Use: "sub", RunE: func(cmd *cobra.Command, _ []string) error {
			b := cmdIO(cmd).NewBar("work", 10, progress.Records)
			b.Report(10, 10)
			b.Finish()
			return nil
		}})
		root.SetErr(tty)
		args := []string{"sub"}
		if quiet {
			args = append(args, "-q")
		}
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		tty.Close()
		out := <-read
		ptmx.Close()
		if got := strings.Contains(out, "work: 10 records in"); got == quiet {
			t.Errorf("quiet %v: %q", quiet, out)
		}
	}
}
