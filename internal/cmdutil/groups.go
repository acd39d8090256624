package cmdutil

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// Group is one heading of the root's help and the commands listed under it.
type Group struct {
	ID, Title string
	Commands  []*cobra.Command
}

// AddGroups adds the groups' commands to root, each under its group's heading. A command
// already under root and in no group panics: every command says where a user will look for it
// (cobra's own help and completion stay under "Additional Commands").
func AddGroups(root *cobra.Command, groups ...Group) {
	for _, g := range groups {
		root.AddGroup(&cobra.Group{ID: g.ID, Title: g.Title})
		for _, c := range g.Commands {
			c.GroupID = g.ID
			root.AddCommand(c)
		}
	}
	for _, c := range root.Commands() {
		if c.GroupID == "" && c.IsAvailableCommand() {
			panic(fmt.Sprintf("cmdutil: command %q is in no group", c.Name()))
		}
	}
}

// completionExamples are the shells' lines that load m3eval's completion.
var completionExamples = map[string]string{
	"bash":       "  source <(m3eval completion bash)\n  m3eval completion bash > /etc/bash_completion.d/m3eval",
	"zsh":        "  m3eval completion zsh > \"${fpath[1]}/_m3eval\"",
	"fish":       "  m3eval completion fish > ~/.config/fish/completions/m3eval.fish",
	"powershell": "  m3eval completion powershell | Out-String | Invoke-Expression",
}

// AddCompletion adds cobra's completion command now (rather than when root runs), with an
// example for each shell.
func AddCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	c := findCommand(root, "completion")
	c.Use = "completion SHELL"
	c.Example = "  m3eval completion bash > ~/.m3eval-completion.bash && echo 'source ~/.m3eval-completion.bash' >> ~/.bashrc"
	var shells []string
	for _, sub := range c.Commands() {
		sub.Example = completionExamples[sub.Name()]
		shells = append(shells, sub.Name())
	}
	// cobra printed the help and exited 0 for a shell it has no script for (completion
	// tcsh): a runnable completion command makes cobra refuse it as an unknown command, a
	// usage error (exit 2). Without a shell it prints the help, as before.
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		return fmt.Errorf("unknown command %q for %q: the shells are %s", args[0], cmd.CommandPath(), strings.Join(shells, ", "))
	}
}

// findCommand returns the command at path (words below root), panicking when there is none.
func findCommand(root *cobra.Command, path string) *cobra.Command {
	cmd := root
	for _, name := range strings.Fields(path) {
		i := slices.IndexFunc(cmd.Commands(), func(c *cobra.Command) bool { return c.Name() == name })
		if i < 0 {
			panic(fmt.Sprintf("cmdutil: no command %q", path))
		}
		cmd = cmd.Commands()[i]
	}
	return cmd
}
