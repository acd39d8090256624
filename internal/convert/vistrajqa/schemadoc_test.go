package vistrajqa

import (
	"os"
	"strings"
	"testing"
)

// TestREADMESchemaTables: the README's input schema tables are SchemaTables' output, so the
// documentation says what the schema file says. On failure the wanted text is printed.
func TestREADMESchemaTables(t *testing.T) {
	want, err := SchemaTables()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), want) {
		t.Fatalf("README.md does not contain the schema tables; the convert section should hold:\n\n%s", want)
	}
}
