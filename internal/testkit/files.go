package testkit

import (
	"encoding/json"
	"os"
	"testing"
)

// ReadJSON decodes the JSON file at path into v; a file that cannot be read or decoded
// fails the test, naming the file.
func ReadJSON(t testing.TB, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
