package cmdutil

import (
	"fmt"

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
