package chars

import "testing"

func TestIsCJK(t *testing.T) {
	for r, want := range map[rune]bool{
		'a': false, '3': false, ' ': false, '。': false, '，': false, '、': false, 'Ａ': false, '─': false,
		'图': true, '〇': true, '⺀': true, 'あ': true, 'カ': true, '한': false, 'ᄀ': false, '😀': false,
	} {
		if IsCJK(r) != want {
			t.Errorf("IsCJK(%q) = %v, want %v", r, !want, want)
		}
	}
	if !HasCJK("image 2 的车") || HasCJK("image 2, 한국어。") {
		t.Error("HasCJK")
	}
}

func TestIsDigits(t *testing.T) {
	for s, want := range map[string]bool{"": false, "0": true, "0123456789": true, "12a": false, "-1": false, "３": false, " 1": false} {
		if IsDigits(s) != want {
			t.Errorf("IsDigits(%q) = %v, want %v", s, !want, want)
		}
	}
}
