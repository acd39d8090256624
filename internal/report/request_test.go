package report

import (
	"errors"
	"testing"

	"github.com/m3bench/m3eval/internal/usage"
)

// TestRequestCheck: every listed --format is accepted; the refusals keep m3eval report's
// messages.
func TestRequestCheck(t *testing.T) {
	for _, f := range Formats {
		q := Request{Format: string(f), Options: Options{By: "model", QC: true}}
		if err := q.Check(); err != nil {
			t.Errorf("--format %s: %v", f, err)
		}
	}
	for _, tc := range []struct {
		q    Request
		want string
	}{
		{Request{Format: "pdf"}, `--format "pdf": use html or json`},
		{Request{Format: "json", PDF: true}, "--pdf prints the HTML page: leave out --format json"},
		{Request{Format: "html", Options: Options{Bootstrap: -2}}, "--bootstrap -2: the number of replicates cannot be negative"},
		{Request{Format: "html", Options: Options{Campaign: "c1"}}, "--campaign scopes the quality control: leave out --qc=false"},
		{Request{Format: "html", Testsets: []string{"a=b"}}, "--illusion-testset needs --illusion LOG"},
	} {
		if err := tc.q.Check(); err == nil || err.Error() != tc.want || !errors.Is(err, usage.Err) {
			t.Errorf("got %v, want %s", err, tc.want)
		}
	}
}
