package importer_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
)

// asciiJSON is JSON text with every non-ASCII character written as a \u escape, as Python's
// json.dump writes by default (ensure_ascii): outside strings JSON has no such character.
func asciiJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x80:
			b.WriteRune(r)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, hi, lo)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// TestReimportWithEscapedMeta: the tour's labels written by a Python script with json.dump's
// default escapes ("\u4f1e" for 伞) name the same turns as the demo; the turns whose meta holds
// Chinese were refused as "already imported with different content" (the meta was compared
// as written). Found importing such a file after import --demo.
func TestReimportWithEscapedMeta(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "e.db")
	if _, err := runImport(t, db, parseImport(t, "--demo")); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile("../../annotations/tour/bob.json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), "伞") {
		t.Fatal("bob.json has no Chinese meta: the test needs one")
	}
	escaped := writeFile(t, dir, "bob-ascii.json", asciiJSON(string(body)))
	out, err := runImport(t, db, parseImport(t, "--annotator", "bob", escaped))
	if err != nil {
		t.Fatalf("import of the escaped labels: %v", err)
	}
	if !strings.Contains(out, "0 turns new, 35 unchanged, 0 replaced; 35 labels new") {
		t.Errorf("import of the escaped labels said:\n%s", out)
	}
	// And back: the labels as written (unescaped) are the same turns and labels again.
	out, err = runImport(t, db, parseImport(t, "--annotator", "bob", "../../annotations/tour/bob.json"))
	if err != nil || !strings.Contains(out, "0 turns new, 35 unchanged, 0 replaced; 0 labels new, 35 unchanged") {
		t.Errorf("import of the labels as written: %v\n%s", err, out)
	}
}
