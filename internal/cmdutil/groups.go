package cmdutil

import (
	"fmt"

	"github.com/spf13/cobra"
)

// Group is one heading of the root's help and the commands listed under it.
type Group struct {
	ID, Title string
	Commands  []string
}

// SetGroups adds the groups to root and files each named command under its group. A named
// command that does not exist, or a visible command left in no group, panics: a new command
// must say where a user will look for it.
func SetGroups(root *cobra.Command, groups []Group) {
	for _, g := range groups {
		root.AddGroup(&cobra.Group{ID: g.ID, Title: g.Title})
		for _, name := range g.Commands {
			findCommand(root, name).GroupID = g.ID
		}
	}
	for _, c := range root.Commands() {
		if c.GroupID == "" && c.IsAvailableCommand() && c.Name() != "help" && c.Name() != "completion" {
			panic(fmt.Sprintf("cmdutil: command %q is in no group", c.Name()))
		}
	}
}
