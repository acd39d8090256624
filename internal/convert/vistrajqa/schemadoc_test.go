package vistrajqa

import (
	"os"
	"strings"
	"testing"
)

// TestDocSchemaTables: the input schema tables of docs/vistrajqa.md are SchemaTables'
// output, so the documentation says what the schema file says. On failure the wanted text is
// printed.
func TestDocSchemaTables(t *testing.T) {
	want, err := SchemaTables()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../../docs/vistrajqa.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), want) {
		t.Fatalf("docs/vistrajqa.md does not contain the schema tables; its \"Input schema\" section should hold:\n\n%s", want)
	}
}
