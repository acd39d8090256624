package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/store"
)

// A nameFlag is a flag whose value must name something the database already holds: an
// annotator, a judge, a sample (a campaign is named by its sample) or a turn's sample_id.
// Flags that name something new (import --annotator, annotate --annotator, import-scores
// --judge, judge --name, sample --name, adjudicate --adjudicator) are not in the list.
type nameFlag struct {
	command, flag string
	from          store.Completion
	kind          string // the word for one of them in the message
}

// nameFlags is every flag that takes the name of something in the database. The rule for
// all of them (the README's "Commands" section says it to users): a name the database does
// not hold is an error, exit status 1 (the command line is well formed; the data lacks the
// name), said before anything runs as
//
//	--FLAG VALUE: no such KIND in DB (KINDs: a, b, c)
var nameFlags = []nameFlag{
	{"annotate", "campaign", store.CompleteSamples, "sample"},
	{"annotate", "start", store.CompleteSampleIDs, "sample_id"},
	{"export", "annotator", store.CompleteAnnotators, "annotator"},
	{"export", "campaign", store.CompleteSamples, "sample"},
	{"score", "annotator", store.CompleteAnnotators, "annotator"},
	{"score", "judge", store.CompleteJudges, "judge"},
	{"report", "judge", store.CompleteJudges, "judge"},
	{"report", "campaign", store.CompleteSamples, "sample"},
	{"sample", "show", store.CompleteSamples, "sample"},
	{"assign", "sample", store.CompleteSamples, "sample"},
	{"qc", "campaign", store.CompleteSamples, "sample"},
	{"adjudicate", "campaign", store.CompleteSamples, "sample"},
	{"adjudicate", "take", store.CompleteAnnotators, "annotator"},
	{"adjudicate", "turn", store.CompleteSampleIDs, "sample_id"},
	{"judge", "explain", store.CompleteSampleIDs, "sample_id"},
	{"estimate", "judge", store.CompleteJudges, "judge"},
	{"estimate", "annotator", store.CompleteAnnotators, "annotator"},
	{"estimate", "sample", store.CompleteSamples, "sample"},
	{"sample", "judge", store.CompleteJudges, "judge"},
}

// namesShown is how many of the known names an unknown-name message lists.
const namesShown = 10

// idsShown is how many sample ids it lists (examples of the form; there are many).
const idsShown = 3

// checkNames applies the rule of nameFlags to the command about to run. A database that is
// not there (or cannot be read) is left to the command, which says so in its own words.
func checkNames(cmd *cobra.Command, dbPath string) error {
	var mine []nameFlag
	for _, nf := range nameFlags {
		if commandPath(cmd) == nf.command && cmd.Flags().Changed(nf.flag) {
			mine = append(mine, nf)
		}
	}
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
