// Package cmdutil is the cobra machinery m3eval's commands share, apart from any one command:
// the registry of flag values (one table both validates and completes them), completion from
// the database, command groups, the version line and the generated CLI reference. It holds no
// domain rule: the registry names the lists that the domain packages export.
package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/store"
)

// Flag says what one flag of one command accepts and how the shell completes it. Set one of
// Values, Suggest, Keys or From.
type Flag struct {
	// Command is the command's path below the root, e.g. "illusion score".
	Command string
	// Name is the flag's long name.
	Name string
	// Values are the only values the flag accepts (besides its default): any other is a usage
	// error that lists them. The shell completes them.
	Values []string
	// Suggest are values the shell completes; others are accepted (e.g. meta.NAME keys).
	Suggest []string
	// Keys are the keys of a KEY=VALUE flag: the shell completes "KEY=".
	Keys []string
	// From completes values from the database named by --db (never created by completing).
	From store.Completion
}

// ValueError is an unknown value of an enumerated flag.
type ValueError struct {
	Flag, Value string
	Valid       []string
}

func (e *ValueError) Error() string {
	// The empty value (report --by "": no groups) is no choice among the others: it is
	// named as what it means rather than listed as a bare "".
	var valid []string
	none := ""
	for _, v := range e.Valid {
		if v == "" {
			none = ` (or "" for none)`
			continue
		}
		valid = append(valid, v)
	}
	return fmt.Sprintf("--%s %q: use one of %s%s", e.Flag, e.Value, strings.Join(valid, ", "), none)
}

// enumValue checks each value set against the valid ones before the flag's own Value takes it.
type enumValue struct {
	pflag.Value
	name  string
	def   string
	valid []string
}

func (v *enumValue) Set(s string) error {
	parts := []string{s}
	if strings.HasSuffix(v.Type(), "Slice") { // "a,b" is two values
		parts = strings.Split(s, ",")
	}
	for _, p := range parts {
		if p != v.def && !slices.Contains(v.valid, p) {
			return &ValueError{Flag: v.name, Value: p, Valid: v.valid}
		}
	}
	return v.Value.Set(s)
}

// CompletionLimit caps the values completed from the database: a shell lists them all.
const CompletionLimit = 200

// completionTimeout bounds a completion's database read: a shell waits for it.
const completionTimeout = 2 * time.Second

// ApplyFlags applies the table to the command tree under root: it wraps each enumerated flag
// so that an unknown value fails at parse time, and registers every flag's completion. A row
// naming a command or flag that does not exist panics: the table is code, and every test that
// builds the root command checks it.
func ApplyFlags(root *cobra.Command, table []Flag) {
	for _, f := range table {
		cmd := findCommand(root, f.Command)
		fl := cmd.Flags().Lookup(f.Name)
		if fl == nil {
			panic(fmt.Sprintf("cmdutil: %q has no flag --%s", cmd.CommandPath(), f.Name))
		}
		var complete cobra.CompletionFunc
		switch {
		case f.Values != nil:
			fl.Value = &enumValue{Value: fl.Value, name: f.Name, def: fl.DefValue, valid: f.Values}
			complete = cobra.FixedCompletions(slices.DeleteFunc(slices.Clone(f.Values), func(v string) bool { return v == "" }),
				cobra.ShellCompDirectiveNoFileComp)
		case f.Suggest != nil:
			complete = cobra.FixedCompletions(f.Suggest, cobra.ShellCompDirectiveNoFileComp)
		case f.Keys != nil:
			keys := make([]string, len(f.Keys))
			for i, k := range f.Keys {
				keys[i] = k + "="
			}
			complete = cobra.FixedCompletions(keys, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace)
		case f.From != "":
			complete = fromDatabase(f.From)
		default:
			panic(fmt.Sprintf("cmdutil: %s --%s: nothing to complete", cmd.CommandPath(), f.Name))
		}
		if err := cmd.RegisterFlagCompletionFunc(f.Name, complete); err != nil {
			panic("cmdutil: " + err.Error())
		}
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

// fromDatabase completes from the database the command's --db flag names. A database that
// does not exist or cannot be read completes nothing.
func fromDatabase(what store.Completion) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		none := cobra.ShellCompDirectiveNoFileComp
		db := cmd.Flag("db")
		if db == nil {
			return nil, none
		}
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		ctx, cancel := context.WithTimeout(ctx, completionTimeout)
		defer cancel()
		c, err := store.OpenCompleter(ctx, db.Value.String())
		if err != nil {
			return nil, none
		}
		defer c.Close()
		values, err := c.Complete(ctx, what, prefix, CompletionLimit)
		if err != nil {
			return nil, none
		}
		// A name with a control character (a newline, an escape sequence) would break the
		// line-based protocol or reach the terminal; nobody can type it anyway.
		return slices.DeleteFunc(values, func(v string) bool { return strings.IndexFunc(v, unicode.IsControl) >= 0 }), none
	}
}

// Strings converts a list of named string values (formats, methods) for a Flag.
func Strings[S ~string](values ...S) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

// FlagErrors is a cobra FlagErrorFunc: it passes each flag parse error through usage (which
// marks it as a usage error) after reducing an enumerated flag's pflag wrapping ("invalid
// argument ... for ... flag: ") to its ValueError, which lists the valid values.
func FlagErrors(usage func(error) error) func(*cobra.Command, error) error {
	return func(_ *cobra.Command, err error) error {
		if ve := (*ValueError)(nil); errors.As(err, &ve) {
			err = ve
		}
		return usage(err)
	}
}
