package answer

import "testing"

// fold's shortcuts (ASCII byte by byte, texts with nothing to fold returned as they are)
// agree with the long way, rune by rune.
func TestFoldShortcuts(t *testing.T) {
	for _, s := range []string{
		"", " ", "a", "the umbrella is black.", "The umbrella is black.", "two  spaces", " leading", "trailing ",
		"tab\there", "line\nbreak", "a\vb", "a\fb", "a\rb", "it isn't red", "图中有三个苹果。", "“东山站”", "‘quoted’",
		"ｆｕｌｌ　ｗｉｄｔｈ", "半角｡", "5 − 2 = 3 apples", "a\u00a0b", "a\u0085b", "Ǆ ǅ ǆ", "Ⓐ ⓐ", "Σίσυφος", "图 中",
		"图  中", " 图", "图 ",
	} {
		if got, want := fold(s), foldRunes(s); got != want {
			t.Errorf("fold(%q) = %q, rune by rune %q", s, got, want)
		}
	}
	if Fold("三个 Apples") != "三个 apples" {
		t.Errorf("Fold(%q) = %q: Chinese numerals stay", "三个 Apples", Fold("三个 Apples"))
	}
}
