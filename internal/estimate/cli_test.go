package estimate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/estimate"
	"github.com/m3bench/m3eval/internal/testkit"
	"github.com/m3bench/m3eval/internal/workflow"
)

// These helpers import through the importer and run m3eval estimate (its Request's Run) and
// sample --active (workflow.SampleCommand) (moved from cmd/m3eval/estimate_test.go).

// The shared helpers, written once in internal/testkit.
var (
	errFlag      = testkit.ErrFlag
	isUsage      = testkit.IsUsage
	openDB       = testkit.OpenDB
	importFiles  = testkit.ImportFiles
	importScores = testkit.ImportScores
)

// runEstimate is m3eval estimate with args on the database at db, through its Request's Run.
func runEstimate(t testing.TB, db string, args ...string) (string, error) {
	t.Helper()
	out, _, err := testkit.RunCommand(t, &estimate.Request{}, db, args...)
	return out, err
}

func mustEstimate(t testing.TB, db string, args ...string) string {
	t.Helper()
	out, err := runEstimate(t, db, args...)
	if err != nil {
		t.Fatalf("estimate %v: %v", args, err)
	}
	return out
}

// estimateJSON runs estimate with --format json and decodes it into v.
func estimateJSON(t testing.TB, db string, v any, args ...string) {
	t.Helper()
	if err := json.Unmarshal([]byte(mustEstimate(t, db, append(args, "--format", "json")...)), v); err != nil {
		t.Fatal(err)
	}
}

// runSample parses args as m3eval sample's flags and runs workflow.SampleCommand: what it
// shows and, after it, the notes the command prints on standard error.
func runSample(t testing.TB, db string, args ...string) (string, error) {
	t.Helper()
	c := &workflow.SampleCommand{}
	fs := pflag.NewFlagSet("sample", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return "", fmt.Errorf("%w: %v", errFlag, err)
	}
	if err := c.Check(); err != nil {
		return "", err
	}
	s, r := openDB(t, db, c.StoreOptions())
	defer s.Close()
	render, err := c.Run(context.Background(), s, r)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	if err := render(&out); err != nil {
		return "", err
	}
	for _, line := range c.Notes() {
		fmt.Fprintln(&out, line)
	}
	return out.String(), nil
}

func mustSample(t testing.TB, db string, args ...string) string {
	t.Helper()
	out, err := runSample(t, db, args...)
	if err != nil {
		t.Fatalf("sample %v: %v", args, err)
	}
	return out
}
