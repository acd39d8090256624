package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/store"
)

// A name is the kind of thing a flag names in the database: the shell completes the flag
// with them, and a flag that names something that must exist follows one rule (checkNames).
type name struct {
	complete store.Completion // what the shell offers
	exists   store.Completion // what must hold the value; "": the flag names something new
	kind     string           // the word for one of them in the message
}

// The names flags take. A campaign is named by its sample: the shell offers the samples that
// were assigned, and any sample passes the check.
var (
	annotatorName = name{store.CompleteAnnotators, store.CompleteAnnotators, "annotator"}
	judgeName     = name{store.CompleteJudges, store.CompleteJudges, "judge"}
	sampleName    = name{store.CompleteSamples, store.CompleteSamples, "sample"}
	campaignName  = name{store.CompleteCampaigns, store.CompleteSamples, "sample"}
	sampleIDName  = name{store.CompleteSampleIDs, store.CompleteSampleIDs, "sample_id"}
)

// fresh is n for a flag that names something new (import --annotator, annotate --annotator,
// import-scores --judge, judge --name): completed from the database, never checked.
func (n name) fresh() name {
	n.exists = ""
	return n
}

// nameAnnotation is the annotation (pflag.Flag.Annotations) that says what a flag names:
// what completes it, what must hold it ("" for a new name), and the kind's word.
const nameAnnotation = "m3eval_name"

// names declares what cmd's flags name in the database (declared already, perhaps by an
// engine's AddFlags): the shell completes them from the database --db names, and a flag
// whose name must exist follows the rule of checkNames. A flag that does not exist panics:
// this is code, and every test that builds the root command runs it.
func names(cmd *cobra.Command, flags map[string]name) {
	for flag, n := range flags {
		if err := cmd.Flags().SetAnnotation(flag, nameAnnotation, []string{string(n.complete), string(n.exists), n.kind}); err != nil {
			panic(fmt.Sprintf("%s: %v", cmd.CommandPath(), err))
		}
		if err := cmd.RegisterFlagCompletionFunc(flag, fromDatabase(n.complete)); err != nil {
			panic(fmt.Sprintf("%s: %v", cmd.CommandPath(), err))
		}
	}
}

// A nameFlag is a flag whose value must name something the database already holds: an
// annotator, a judge, a sample (a campaign is named by its sample) or a turn's sample_id.
type nameFlag struct {
	command, flag string
	from          store.Completion
	kind          string // the word for one of them in the message
}

// nameFlagOf is what f names (ok false: nothing the database holds), as declared by names;
// fresh tells a new name.
func nameFlagOf(command string, f *pflag.Flag) (nf nameFlag, fresh, ok bool) {
	a, ok := f.Annotations[nameAnnotation]
	if !ok {
		return nameFlag{}, false, false
	}
	return nameFlag{command: command, flag: f.Name, from: store.Completion(a[1]), kind: a[2]}, a[1] == "", true
}

// The rule for every flag that takes the name of something in the database (the README's
// "Commands" section says it to users): a name the database does not hold is an error, exit
// status 1 (the command line is well formed; the data lacks the name), said before anything
// runs as
//
//	--FLAG VALUE: no such KIND in DB (KINDs: a, b, c)

// namesShown is how many of the known names an unknown-name message lists.
const namesShown = 10

// idsShown is how many sample ids it lists (examples of the form; there are many).
const idsShown = 3

// checkNames applies the rule above to the command about to run. A database that is
// not there (or cannot be read) is left to the command, which says so in its own words.
func checkNames(cmd *cobra.Command, dbPath string) error {
	var mine []nameFlag
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if nf, fresh, ok := nameFlagOf(commandPath(cmd), f); ok && !fresh && f.Changed {
			mine = append(mine, nf)
		}
	})
	if len(mine) == 0 {
		return nil
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	c, err := store.OpenCompleter(ctx, dbPath)
	if err != nil {
		return nil
	}
	defer c.Close()
	for _, nf := range mine {
		for _, v := range flagValues(cmd.Flags().Lookup(nf.flag)) {
			if v == "" {
				continue
			}
			got, err := c.Complete(ctx, nf.from, v, 1)
			if err != nil {
				return nil // an older schema: the command decides
			}
			if len(got) == 1 && got[0] == v {
				continue
			}
			return unknownName(ctx, c, nf, v, store.DisplayName(dbPath))
		}
	}
	return nil
}

// unknownName is the one message for a name the database does not hold.
func unknownName(ctx context.Context, c *store.Completer, nf nameFlag, v, dbPath string) error {
	shown := namesShown
	if nf.from == store.CompleteSampleIDs {
		shown = idsShown
	}
	known, _ := c.Complete(ctx, nf.from, "", shown+1)
	list := "there are none yet"
	if len(known) > 0 {
		more := ""
		if len(known) > shown {
			known, more = known[:shown], ", …"
		}
		list = nf.kind + "s: " + strings.Join(known, ", ") + more
	}
	return fmt.Errorf("--%s %s: no such %s in %s (%s)", nf.flag, v, nf.kind, dbPath, list)
}

// commandPath is the command's path below the root: "score", "illusion score".
func commandPath(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// flagValues is a flag's value, or its values for a repeatable flag.
func flagValues(f *pflag.Flag) []string {
	if f == nil {
		return nil
	}
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		return sv.GetSlice()
	}
	return []string{f.Value.String()}
}

// completionLimit caps the values completed from the database: a shell lists them all.
const completionLimit = 200

// completionTimeout bounds a completion's database read: a shell waits for it.
const completionTimeout = 2 * time.Second

// fromDatabase completes from the database the command's --db flag names. A database that
// does not exist or cannot be read completes nothing (completing never creates one).
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
		values, err := c.Complete(ctx, what, prefix, completionLimit)
		if err != nil {
			return nil, none
		}
		// A name with a control character (a newline, an escape sequence) would break the
		// line-based protocol or reach the terminal; nobody can type it anyway.
		return slices.DeleteFunc(values, func(v string) bool { return strings.IndexFunc(v, unicode.IsControl) >= 0 }), none
	}
}
