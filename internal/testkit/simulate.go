package testkit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/simulate"
	"github.com/m3bench/m3eval/internal/simulate/demovlm"
)

// DemoVLMServer is the scripted VLM (demovlm) for the scenes file, its images resolved
// beside it; DemoVLM serves it, a test that wraps its handler takes it from here.
func DemoVLMServer(t testing.TB, scenesFile string) *demovlm.Server {
	t.Helper()
	scenes, err := simulate.ReadScenesFile(scenesFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := simulate.ResolveImages(scenes, scenesFile, filepath.Dir(scenesFile)); err != nil {
		t.Fatal(err)
	}
	d, err := demovlm.New(scenes, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// DemoVLM serves the scripted VLM for the scenes file on 127.0.0.1, each answer delayed; it
// returns the address to give m3eval simulate --endpoint, and the test's cleanup stops it.
func DemoVLM(t testing.TB, scenesFile string, delay time.Duration) string {
	t.Helper()
	d := DemoVLMServer(t, scenesFile)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		d.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// RunSimulate parses args (after "m3eval simulate") into the command's request, as cobra
// does, and calls its Run, the command's own path: standard output and standard error
// together, and the error; a flag error comes back wrapped in ErrFlag.
func RunSimulate(t testing.TB, args ...string) (string, error) {
	t.Helper()
	var q simulate.Request
	fs := pflag.NewFlagSet("simulate", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	q.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return "", fmt.Errorf("%w: %v", ErrFlag, err)
	}
	var out bytes.Buffer
	err := q.Run(context.Background(), &cmdio.IO{Out: &out, Err: &out})
	return out.String(), err
}

// MustSimulate is RunSimulate that fails the test on an error, showing the output.
func MustSimulate(t testing.TB, args ...string) string {
	t.Helper()
	out, err := RunSimulate(t, args...)
	if err != nil {
		t.Fatalf("simulate %v: %v\n%s", args, err, out)
	}
	return out
}

// SortedLines is the lines of the file at path, sorted (the order a concurrent run wrote
// them in does not count).
func SortedLines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	slices.Sort(lines)
	return lines
}

// LineCount is how many newline-ended lines the file at path holds (0 when it cannot be
// read).
func LineCount(path string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), "\n")
}
