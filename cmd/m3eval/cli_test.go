package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// run executes the m3eval command line in-process and returns its standard output.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(t, args...)
	if err != nil {
		t.Fatalf("m3eval %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}
