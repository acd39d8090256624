package judgerun

import (
	"errors"
	"io"
	"testing"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/usage"
)

// TestRequestCheck: every listed --format is accepted with --explain, another refused when
// parsed, and one other than table refused without --explain (it would be ignored); the
// refusals keep m3eval judge's messages.
func TestRequestCheck(t *testing.T) {
	for _, f := range ExplainFormats {
		if _, err := (&Request{Format: f, Explain: "s1"}).Check(); err != nil {
			t.Errorf("--explain s1 --format %s: %v", f, err)
		}
	}
	if filter, err := (&Request{Format: "table", Filters: []string{"model=m"}}).Check(); err != nil || len(filter["model"]) != 1 {
		t.Errorf("--filter model=m: %v %v", filter, err)
	}
	for _, tc := range []struct {
		q    Request
		want string
	}{
		{Request{Format: "table", Filters: []string{"colour=red"}}, `--filter "colour=red": unknown key colour (keys: action_type, episode, model, sample_id, task_type)`},
		{Request{Format: "table", Explain: "s1", Replace: true}, "--explain shows one sample and stores nothing: drop --filter and --replace"},
		{Request{Format: "json"}, "--format json is the output of --explain: give --explain SAMPLE_ID, or drop --format"},
	} {
		if _, err := tc.q.Check(); err == nil || err.Error() != tc.want || !errors.Is(err, usage.Err) {
			t.Errorf("got %v, want %s", err, tc.want)
		}
	}
	fs := pflag.NewFlagSet("judge", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	(&Request{}).AddFlags(fs)
	var ve *cmdutil.ValueError
	if err := fs.Parse([]string{"--format", "md"}); !errors.As(err, &ve) || ve.Error() != `--format "md": use one of table, json` {
		t.Errorf("--format md: %v", err)
	}
}
