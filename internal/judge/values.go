package judge

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Values the word lists cannot hold, read by pattern: prices ("$3", "3 dollars", "3元"),
// dates ("may 12", "12 may", "5月12日") and quoted text ("'fresh daily'", "“东山站”"). They
// are compared like colours and counts (Rules.Correctness.ConflictClasses,
// Rules.ConsistencyClasses): a response that states another price, date or wording than the
// expected answer or the earlier turns conflicts with them.

var (
	pricePattern = regexp.MustCompile(`\$\s?(\d+(?:\.\d+)?)|(\d+(?:\.\d+)?)\s?(?:dollars?\b|usd\b|元|块钱|块)`)
	dateEnA      = regexp.MustCompile(`\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b`)
	dateEnB      = regexp.MustCompile(`\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b`)
	dateZh       = regexp.MustCompile(`(\d{1,2})\s?月\s?(\d{1,2})\s?[日号]`)
	// monthWord is what hasMonthWord finds, kept as its reference (TestHasMonthWord).
	monthWord    = regexp.MustCompile(`\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)`)
	quotePattern = regexp.MustCompile(`"([^"]{2,80})"|(?:^|[\s(:,;])'([^']{2,80})'(?:$|[\s).,;:!?])|「([^」]{1,80})」|《([^》]{1,80})》`)
)

// patternClass marks the classes patternMentions finds.
var patternClass = map[string]bool{"price": true, "date": true, "quote": true}

var months = map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12}

// patternMentions finds the prices, dates and quoted text of folded text s and marks their
// bytes taken (their digits are not counts).
func patternMentions(s string, taken []bool) []mention {
	// Most texts hold none of these: cheap checks first keep the rule judge's million-turn
	// runs from paying for the regular expressions (BenchmarkJudge1M).
	hasDigit := strings.ContainsAny(s, "0123456789")
	hasQuote := quoteCandidate(s)
	if !hasDigit && !hasQuote {
		return nil
	}
	var out []mention
	mark := func(i, j int) {
		for k := i; k < j && k < len(taken); k++ {
			taken[k] = true
		}
	}
	free := func(i, j int) bool {
		for k := i; k < j && k < len(taken); k++ {
			if taken[k] {
				return false
			}
		}
		return true
	}
	prices := hasDigit && (strings.Contains(s, "$") || strings.Contains(s, "dollar") || strings.Contains(s, "usd") || strings.ContainsAny(s, "元块"))
	dates := hasDigit && (strings.Contains(s, "月") || hasMonthWord(s))
	if !prices && !dates && !hasQuote {
		return nil
	}
	var priceHits [][]int
	if prices {
		priceHits = pricePattern.FindAllStringSubmatchIndex(s, -1)
	}
	for _, m := range priceHits {
		v := ""
		if m[2] >= 0 {
			v = s[m[2]:m[3]]
		} else {
			v = s[m[4]:m[5]]
		}
		if free(m[0], m[1]) {
			out = append(out, mention{class: "price", value: canonNumber(v), at: m[0], spelling: s[m[0]:m[1]]})
			mark(m[0], m[1])
		}
	}
	addDate := func(at, end, month, day int) {
		if month < 1 || month > 12 || day < 1 || day > 31 || !free(at, end) {
			return
		}
		out = append(out, mention{class: "date", value: strconv.Itoa(month) + "-" + strconv.Itoa(day), at: at, spelling: s[at:end]})
		mark(at, end)
	}
	if dates {
		for _, m := range dateEnA.FindAllStringSubmatchIndex(s, -1) {
			d, _ := strconv.Atoi(s[m[4]:m[5]])
			addDate(m[0], m[1], months[s[m[2]:m[3]]], d)
		}
		for _, m := range dateEnB.FindAllStringSubmatchIndex(s, -1) {
			d, _ := strconv.Atoi(s[m[2]:m[3]])
			addDate(m[0], m[1], months[s[m[4]:m[5]]], d)
		}
		for _, m := range dateZh.FindAllStringSubmatchIndex(s, -1) {
			mo, _ := strconv.Atoi(s[m[2]:m[3]])
			d, _ := strconv.Atoi(s[m[4]:m[5]])
			addDate(m[0], m[1], mo, d)
		}
	}
	if !hasQuote {
		return out
	}
	for _, m := range quotePattern.FindAllStringSubmatchIndex(s, -1) {
		for g := 2; g < len(m); g += 2 {
			if m[g] < 0 {
				continue
			}
			v := strings.Trim(s[m[g]:m[g+1]], " .,;:!?。，；：！？")
			if v != "" {
				out = append(out, mention{class: "quote", value: v, at: m[g], spelling: s[m[g]:m[g+1]]})
			}
			mark(m[g], m[g+1])
		}
	}
	return out
}

// hasMonthWord is monthWord.MatchString(s), by hand: a month's first three letters after a
// word boundary (RE2's \b: ASCII letters, digits and _ are word characters). The judge asks
// it of every text with a digit, and the regular expression's backtracker took 5% of the
// rule judge's time (#43).
func hasMonthWord(s string) bool {
	for i := 0; i+3 <= len(s); i++ {
		if i > 0 && isASCIIWordByte(s[i-1]) {
			continue
		}
		switch s[i : i+3] {
		case "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec":
			return true
		}
	}
	return false
}

func isASCIIWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// quoteCandidate tells whether quotePattern may match s: a double quote, 「 or 《, or a
// single quote opening the text or after white space, "(", ":", "," or ";" (an apostrophe
// inside a word, "isn't", never opens a quote: most English answers then skip the pattern).
func quoteCandidate(s string) bool {
	if strings.IndexByte(s, '"') >= 0 || strings.Contains(s, "「") || strings.Contains(s, "《") {
		return true // (ContainsAny with a set beyond ASCII looks each rune up in the set)
	}
	for i := strings.IndexByte(s, '\''); i >= 0; {
		if i == 0 {
			return true
		}
		switch s[i-1] {
		case ' ', '\t', '\n', '\f', '\r', '(', ':', ',', ';':
			return true
		}
		k := strings.IndexByte(s[i+1:], '\'')
		if k < 0 {
			break
		}
		i += 1 + k
	}
	return false
}

// canonNumber spells a number one way: "3", "3.0" and "3.00" are 3.
func canonNumber(v string) string {
	if x, err := strconv.ParseFloat(v, 64); err == nil {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return v
}

// headAfter returns the word a value or count at folded[end:] is about when no object of
// the list stands there: the next Latin word of its clause, articles, stop words and values
// skipped ("three sailboats", "a red kayak"), stemmed; "" when there is none (Chinese text,
// whose words have no spaces to find them by, or the clause ends). An object outside the
// built-in list is still an object.
func (t *text) headAfter(end, clauseEnd int, values []mention) (string, int) {
	s := t.folded
	i := end
	for words := 0; i < clauseEnd && words < 3; {
		for i < clauseEnd && s[i] == ' ' {
			i++
		}
		j := i
		for j < clauseEnd {
			r, n := utf8.DecodeRuneInString(s[j:])
			if !isWordRune(r) || r >= 0x80 {
				break
			}
			j += n
		}
		if j == i {
			return "", 0
		}
		w := s[i:j]
		isValue := false
		for _, m := range values {
			if m.at == i {
				isValue = true
			}
		}
		if !isValue && !t.lr.articles[w] && !t.lr.stop[w] && !strings.ContainsAny(w, "0123456789") && len(w) > 2 {
			return stem(w), i
		}
		words++
		i = j
	}
	return "", 0
}
