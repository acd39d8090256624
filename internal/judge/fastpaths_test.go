package judge

import (
	"testing"
)

// The shortcuts of the judge's text handling agree with the long way on texts that take
// them and texts that do not (#43: the shortcuts exist for speed only).
var fastPathTexts = []string{
	"", " ", "a", "the umbrella is black.", "The umbrella is black.", "two  spaces", " leading", "trailing ",
	"tab\there", "line\nbreak", "it isn't red, it's black", "she said 'fresh daily' twice", "'quoted' first",
	"('a')", "x,'yz' w", "isn't it?", "图中有三个苹果。", "“东山站”", "ｆｕｌｌ　ｗｉｄｔｈ", "5 − 2 = 3 apples",
	"there are five apples, and a dozen eggs", "\"double\" quotes", "《书名》", "「引号」", "price: $3.50",
	"it's the apples' colour: 'green'", "a\u00a0b", "a\u0085b", "a\vb", "a\fb", "a\rb",
}

func TestCountTokens(t *testing.T) {
	r := DefaultRules()
	for _, lang := range []string{"en", "zh"} {
		lr := r.lang(lang)
		for _, s := range fastPathTexts {
			f := foldText(s)
			n := len(tokens(f, lr, nil))
			for limit := 1; limit <= 4; limit++ {
				if got := countTokens(f, lr, limit); got != min(n, limit) {
					t.Errorf("%s: countTokens(%q, %d) = %d, tokens gives %d", lang, f, limit, got, n)
				}
			}
		}
	}
}

func TestQuoteCandidate(t *testing.T) {
	for _, s := range fastPathTexts {
		f := foldText(s)
		if quotePattern.MatchString(f) && !quoteCandidate(f) {
			t.Errorf("%q holds a quote, but quoteCandidate says no", f)
		}
	}
	for _, s := range []string{"it isn't red", "the apples' colour", "no quote"} {
		if quoteCandidate(s) {
			t.Errorf("quoteCandidate(%q): an apostrophe inside words opens no quote", s)
		}
	}
}

func TestHasMonthWord(t *testing.T) {
	for _, s := range append(fastPathTexts, "may 12", "on 12 may", "xmay", "_may", "9may", "图may", "dec", "de", "mayday", "in december.", "Jan 3", "", "ma", "a jun") {
		if got, want := hasMonthWord(s), monthWord.MatchString(s); got != want {
			t.Errorf("hasMonthWord(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}
