package report

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/usage"
)

// TestRequestCheck: every listed --format is accepted, another refused when parsed; Check's
// refusals (of flags together) keep m3eval report's messages.
func TestRequestCheck(t *testing.T) {
	for _, f := range append(Formats, "pdf") {
		q := Request{}
		fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		q.AddFlags(fs)
		err := fs.Parse([]string{"--format", string(f), "--by", ""})
		if f == "pdf" {
			want := "--bootstrap -2: the number of replicates cannot be negative"
			if err := fs.Parse([]string{"--bootstrap", "-2"}); err == nil || !strings.HasSuffix(err.Error(), want) || !errors.Is(err, usage.Err) {
				t.Errorf("--bootstrap -2: %v, want %s", err, want)
			}
			if want := `--format "pdf": use one of html, json`; err == nil || !strings.HasSuffix(err.Error(), want) {
				t.Errorf("--format pdf: %v, want %s", err, want)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Check(); err != nil {
			t.Errorf("--format %s: %v", f, err)
		}
	}
	for _, tc := range []struct {
		q    Request
		want string
	}{
		{Request{Format: "json", PDF: true}, "--pdf prints the HTML page: leave out --format json"},
		{Request{Format: "html", Options: Options{Campaign: "c1"}}, "--campaign scopes the quality control: leave out --qc=false"},
		{Request{Format: "html", Testsets: []string{"a=b"}}, "--illusion-testset needs --illusion LOG"},
	} {
		if err := tc.q.Check(); err == nil || err.Error() != tc.want || !errors.Is(err, usage.Err) {
			t.Errorf("got %v, want %s", err, tc.want)
		}
	}
}
