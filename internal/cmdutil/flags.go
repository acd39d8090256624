// Package cmdutil is the cobra machinery m3eval's commands share, apart from any one command
// and from any engine: enumerated flags (declared with their values, which parsing, help and
// completion read from the flag), a flag's rule of its own value (Check), completion hints
// carried by a flag, command groups, the version line and the generated CLI reference. It imports no m3eval package: the values of a
// flag are given where the flag is declared, by the package that knows them.
package cmdutil

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

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

// enum is the value of an enumerated flag: Set takes only one of values (or the default,
// which may stand for "not given", as illusion score's --kind ""), Type shows the values in
// the help ("--format table|json"), and CompleteFlags completes them.
type enum[T ~string] struct {
	p      *T
	name   string
	def    T
	values []T
}

func (e *enum[T]) Set(s string) error {
	if T(s) != e.def && !slices.Contains(e.values, T(s)) {
		return &ValueError{Flag: e.name, Value: s, Valid: e.Values()}
	}
	*e.p = T(s)
	return nil
}

func (e *enum[T]) String() string { return string(*e.p) }

// Type is the placeholder of the flag's value in the help: its values, "" shown quoted.
func (e *enum[T]) Type() string {
	shown := make([]string, len(e.values))
	for i, v := range e.values {
		shown[i] = string(v)
		if v == "" {
			shown[i] = `""`
		}
	}
	return strings.Join(shown, "|")
}

// Values are the values the flag accepts, in the order its help and errors list them.
func (e *enum[T]) Values() []string {
	out := make([]string, len(e.values))
	for i, v := range e.values {
		out[i] = string(v)
	}
	return out
}

// Enumerated is the value of a flag declared with EnumVar.
type Enumerated interface {
	pflag.Value
	// Values are the values the flag accepts.
	Values() []string
}

// EnumVar defines on fs the flag name that accepts only one of values, stored in *p with
// the default def: any other value is a usage error (ValueError, at parse time) that lists
// them, the help shows them in place of the value's type, and CompleteFlags completes them.
// A list of no values, or a default that is neither one of them nor "", is a mistake in the
// code, and panics.
func EnumVar[T ~string](fs *pflag.FlagSet, p *T, name string, def T, values []T, usage string) {
	if len(values) == 0 || (def != "" && !slices.Contains(values, def)) {
		panic(fmt.Sprintf("cmdutil: --%s: default %q is not one of %q", name, def, values))
	}
	*p = def
	fs.Var(&enum[T]{p: p, name: name, def: def, values: slices.Clone(values)}, name, usage)
}

// The annotations (pflag.Flag.Annotations) by which a flag carries its completion hints.
const (
	suggestAnnotation = "m3eval_suggest"
	keysAnnotation    = "m3eval_keys"
)

// Suggest makes the shell complete the flag name of fs with values, without restricting it
// to them (sample --by also takes meta.NAME). The flag must be defined: a name that is not
// panics.
func Suggest(fs *pflag.FlagSet, name string, values ...string) {
	annotate(fs, name, suggestAnnotation, values)
}

// Keys makes the shell complete "KEY=" for each of keys as the value of the KEY=VALUE flag
// name of fs (--filter, --where).
func Keys(fs *pflag.FlagSet, name string, keys ...string) {
	annotate(fs, name, keysAnnotation, keys)
}

func annotate(fs *pflag.FlagSet, name, key string, values []string) {
	if err := fs.SetAnnotation(name, key, values); err != nil {
		panic("cmdutil: " + err.Error())
	}
}

// CompleteFlags registers, for every flag of the command tree under root, the completion its
// declaration carries: an enumerated flag's values (EnumVar), Suggest's values, Keys' "KEY=".
// A flag with a completion registered already (e.g. from the database) keeps it.
func CompleteFlags(root *cobra.Command) {
	for _, fs := range []*pflag.FlagSet{root.LocalNonPersistentFlags(), root.PersistentFlags()} {
		fs.VisitAll(func(f *pflag.Flag) {
			complete := flagCompletion(f)
			if complete == nil {
				return
			}
			if _, ok := root.GetFlagCompletionFunc(f.Name); ok {
				return
			}
			if err := root.RegisterFlagCompletionFunc(f.Name, complete); err != nil {
				panic("cmdutil: " + err.Error())
			}
		})
	}
	for _, c := range root.Commands() {
		CompleteFlags(c)
	}
}

// flagCompletion is the completion f's declaration carries, or nil.
func flagCompletion(f *pflag.Flag) cobra.CompletionFunc {
	none := cobra.ShellCompDirectiveNoFileComp
	if e, ok := f.Value.(Enumerated); ok {
		// "" (report --by "": none) is not something to complete.
		return cobra.FixedCompletions(slices.DeleteFunc(e.Values(), func(v string) bool { return v == "" }), none)
	}
	if v, ok := f.Annotations[suggestAnnotation]; ok {
		return cobra.FixedCompletions(v, none)
	}
	if keys, ok := f.Annotations[keysAnnotation]; ok {
		eq := make([]string, len(keys))
		for i, k := range keys {
			eq[i] = k + "="
		}
		return cobra.FixedCompletions(eq, none|cobra.ShellCompDirectiveNoSpace)
	}
	return nil
}

// checked is the value of a flag with a rule of its own (Check).
type checked struct {
	pflag.Value
	check func() error
}

func (c *checked) Set(s string) error {
	if err := c.Value.Set(s); err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return &checkError{err}
	}
	return nil
}

// checkError is a value a flag's Check refused: the check's words are the whole message.
type checkError struct{ err error }

func (e *checkError) Error() string { return e.err.Error() }
func (e *checkError) Unwrap() error { return e.err }

// Check gives the flag name of fs a rule of its own value (--bootstrap is not negative):
// check runs after the flag takes each value, and its error refuses the value when it is
// parsed, a usage error in check's own words. A rule that involves other flags belongs to
// the options type's Check, which sees them all. The flag must be defined: a name that is
// not panics, and so does a list flag: pflag would print its empty default, wrapped, as
// "(default [])".
func Check(fs *pflag.FlagSet, name string, check func() error) {
	f := fs.Lookup(name)
	if f == nil {
		panic(fmt.Sprintf("cmdutil: no flag --%s to check", name))
	}
	if _, ok := f.Value.(pflag.SliceValue); ok {
		panic(fmt.Sprintf("cmdutil: --%s is a list: check it in the options' Check", name))
	}
	f.Value = &checked{Value: f.Value, check: check}
}

// Strings converts a list of named string values (formats, methods) for a flag.
func Strings[S ~string](values ...S) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

// FlagErrors is a cobra FlagErrorFunc: it passes each flag parse error through usage (which
// marks it as a usage error) after reducing pflag's wrapping ("invalid argument ... for ...
// flag: ") of an enumerated flag's ValueError, which lists the valid values, or of a Check's
// error, to that error.
func FlagErrors(usage func(error) error) func(*cobra.Command, error) error {
	return func(_ *cobra.Command, err error) error {
		if ve := (*ValueError)(nil); errors.As(err, &ve) {
			err = ve
		} else if ce := (*checkError)(nil); errors.As(err, &ce) {
			err = ce.err
		}
		return usage(err)
	}
}
