package main

import (
	"encoding/json"
	"errors"
	"os"
	"testing"
)

// Helpers the command's tests share (kept from the agree tests that moved to
// internal/agree/longform).

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func errorsAs(err error, target **usageError) bool { return errors.As(err, target) }
