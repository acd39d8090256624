// Package plural writes a count with its English noun, singular for one: "1 request",
// "2 requests". It is a few lines by hand: the nouns m3eval counts all take -s.
package plural

import "strconv"

// N writes the count n with its noun, in the plural unless n is 1: "0 items", "1 item",
// "2 items".
func N(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
