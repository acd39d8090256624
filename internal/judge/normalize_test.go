package judge

import (
	"reflect"
	"testing"
)

func TestZhNumerals(t *testing.T) {
	for in, want := range map[string]string{
		"三个苹果":   "3个苹果",
		"十二辆车":   "12辆车",
		"两百零五":   "205",
		"两百五":    "250",
		"一千零一夜":  "1001夜",
		"二〇二六年":  "2026年",
		"三万四千":   "34000",
		"第二张图片":  "第2张图片",
		"千万别走":   "千万别走", // units alone are not a number
		"没有数字":   "没有数字",
		"九十九朵花":  "99朵花",
		"一亿零三百万": "103000000",
	} {
		if got := zhNumeralsToDigits(in); got != want {
			t.Errorf("zhNumeralsToDigits(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFoldAndTokens(t *testing.T) {
	r := DefaultRules()
	// Full-width to half-width, case, punctuation, articles, number words, plurals.
	got := tokens(foldText("ＴＨＥ　Ｔｈｒｅｅ Apples, an Umbrella!"), r.lang("en"), nil)
	if want := []string{"3", "appl", "umbrella"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tokens = %q, want %q", got, want)
	}
	// One token per CJK character, Chinese numerals as digits, stop characters dropped.
	got = tokens(foldText("图中有两个红色的苹果。"), r.lang("zh"), nil)
	if want := []string{"图", "2", "红", "色", "苹", "果"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tokens = %q, want %q", got, want)
	}
	if DetectLanguage("图中有两个苹果 apples") != "zh" || DetectLanguage("Two apples") != "en" {
		t.Error("DetectLanguage")
	}
}

func TestNegationScope(t *testing.T) {
	r := DefaultRules()
	tx := newText("No, the umbrella is not red, it is black.", "en", r)
	for _, m := range tx.mentions(r) {
		switch m.value {
		case "red":
			if m.negated == "" {
				t.Error("red should be negated")
			}
		case "black":
			if m.negated != "" {
				t.Error("black should not be negated")
			}
		}
	}
	tx = newText("伞并不是红色的，而是黑色的。", "zh", r)
	for _, m := range tx.mentions(r) {
		if (m.value == "red") == (m.negated == "") {
			t.Errorf("%s negated=%q", m.value, m.negated)
		}
	}
}

func TestRulesFileErrors(t *testing.T) {
	for name, data := range map[string]string{
		"not json":      `{`,
		"unknown key":   `{"version": "x", "colour": 1}`,
		"no version":    `{"fields": {}}`,
		"missing field": `{"version": "x", "fields": {"correctness": "c"}}`,
	} {
		if _, err := ParseRules([]byte(data)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	a, b := DefaultRules(), DefaultRules()
	if a.Version != b.Version || a.Version == "" {
		t.Errorf("versions %q %q", a.Version, b.Version)
	}
}

// Korean is written with spaces between words: its words are tokens, not its syllables, and
// a Korean text is not detected as Chinese (chars.IsCJK leaves Hangul out, as the answer
// reader always did).
func TestHangulWords(t *testing.T) {
	lr := DefaultRules().lang("en")
	if got := tokens(foldText("사과 세 개"), lr, nil); len(got) != 3 || got[0] != "사과" {
		t.Errorf("tokens = %q, want the three words", got)
	}
	if l := DetectLanguage("사과가 세 개 있습니다"); l != "en" {
		t.Errorf("DetectLanguage(Korean) = %s, want en (not Chinese)", l)
	}
}
