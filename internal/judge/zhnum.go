package judge

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Chinese numerals are parsed here by hand: the Go module proxy reachable from this project
// serves none of the Chinese-numeral packages (pkumza/numcn, Tnze/go.num: not available), and
// the judge needs only whole numbers in running text.

var zhDigit = map[rune]int64{'零': 0, '〇': 0, '一': 1, '二': 2, '两': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9}
var zhUnit = map[rune]int64{'十': 10, '百': 100, '千': 1000}
var zhBig = map[rune]int64{'万': 10000, '亿': 100000000}

func isZhNumeral(r rune) bool {
	switch r {
	case '零', '〇', '一', '二', '两', '三', '四', '五', '六', '七', '八', '九', '十', '百', '千', '万', '亿':
		return true
	}
	return false
}

// zhNumeralsToDigits replaces every run of Chinese numerals that holds a digit or 十
// ("三", "十二", "两百零五", "二〇二六") by its value in Arabic digits. A run of units alone
// ("千万" as in "千万别") is left as it is.
func zhNumeralsToDigits(s string) string {
	if !strings.ContainsFunc(s, isZhNumeral) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if !isZhNumeral(r) {
			b.WriteString(s[:n])
			s = s[n:]
			continue
		}
		end := 0
		for end < len(s) {
			c, m := utf8.DecodeRuneInString(s[end:])
			if !isZhNumeral(c) {
				break
			}
			end += m
		}
		run := s[:end]
		s = s[end:]
		if v, ok := parseZhNumber(run); ok {
			b.WriteString(v)
		} else {
			b.WriteString(run)
		}
	}
	return b.String()
}

// parseZhNumber reads one run of numerals; ok is false for runs that are not a number.
func parseZhNumber(run string) (string, bool) {
	hasDigit, hasUnit := false, false
	for _, r := range run {
		if _, d := zhDigit[r]; d {
			hasDigit = true
		} else {
			hasUnit = true
		}
	}
	if !hasDigit && !strings.HasPrefix(run, "十") {
		return "", false
	}
	if !hasUnit { // digit by digit: 二〇二六
		var b strings.Builder
		for _, r := range run {
			b.WriteByte(byte('0' + zhDigit[r]))
		}
		return b.String(), true
	}
	var total, section, digit int64
	lastUnit, bigSeen := int64(0), int64(0)
	zero := false // a 零 since the last unit: 两百零五 is 205, 两百五 is 250
	for _, r := range run {
		if d, ok := zhDigit[r]; ok {
			if d == 0 {
				zero = true
			}
			digit = d
			continue
		}
		zero = false
		if u, ok := zhUnit[r]; ok {
			if digit == 0 && u == 10 && section == 0 && total == 0 {
				digit = 1 // 十二 is 12
			}
			section += digit * u
			digit = 0
			lastUnit = u
			continue
		}
		big := zhBig[r]
		section += digit
		if section == 0 {
			section = 1
		}
		if bigSeen != 0 && big < bigSeen {
			total += section * big // 一亿零三百万: the 万 applies to 三百 only
		} else {
			total = (total + section) * big
			bigSeen = big
		}
		section, digit, lastUnit = 0, 0, big
	}
	// 两百五 is 250: a trailing digit after a unit counts a tenth of that unit.
	if digit > 0 && lastUnit >= 100 && lastUnit < 10000 && !zero {
		section += digit * lastUnit / 10
	} else {
		section += digit
	}
	return strconv.FormatInt(total+section, 10), true
}
