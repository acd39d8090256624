// Package jsonpath spells a location in a JSON document the way m3eval's errors name fields:
// the pointer /turns/0/human_annotation/comments becomes turns[0].human_annotation.comments.
package jsonpath

import (
	"iter"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Pointer spells a JSON pointer.
func Pointer(p jsontext.Pointer) string { return spell(p.Tokens()) }

// Tokens spells a pointer given as its tokens (as JSON Schema validators report them).
func Tokens(tokens []string) string { return spell(slices.Values(tokens)) }

// spell writes array indexes as [n] and object keys joined by dots.
func spell(tokens iter.Seq[string]) string {
	var b strings.Builder
	for t := range tokens {
		if _, err := strconv.Atoi(t); err == nil {
			b.WriteString("[" + t + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(t)
	}
	return b.String()
}
