package ingest

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParsePyLiteral parses the Python literal of a list cell, as str(list) writes it. Such are
// VLMEvalKit's MMDU question, answer and prediction cells: lists and tuples of strings,
// numbers, None, True and False, nested. It is a parser of that grammar, written by hand
// because no Go library reads Python literals: nothing is evaluated, so a cell can never
// run code. Strings may be single-, double- or triple-quoted, with the prefixes r, u and b
// and Python's escapes; numbers come back as their text.
func ParsePyLiteral(s string) (any, error) {
	p := &pyParser{s: s}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, p.errorf("unexpected %q after the value", p.rest())
	}
	return v, nil
}

// PyStringList parses a literal that must be a list (or tuple) of strings. None items become
// "" (a turn without an answer), and numbers their text (an answer of 3).
func PyStringList(s string) ([]string, error) {
	v, err := ParsePyLiteral(s)
	if err != nil {
		return nil, err
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("not a list")
	}
	out := make([]string, len(list))
	for i, x := range list {
		switch y := x.(type) {
		case string:
			out[i] = y
		case nil:
		case []any, bool:
			return nil, fmt.Errorf("item %d is not a string", i)
		default:
			return nil, fmt.Errorf("item %d is not a string", i)
		}
	}
	return out, nil
}

type pyParser struct {
	s string
	i int
}

const pyMaxDepth = 64

func (p *pyParser) errorf(format string, args ...any) error {
	//lint:ignore ST1005 the message starts with a name
	return fmt.Errorf("Python literal, at character %d: %s", p.i+1, fmt.Sprintf(format, args...))
}

func (p *pyParser) rest() string {
	r := p.s[p.i:]
	if len(r) > 20 {
		r = r[:20] + "…"
	}
	return r
}

func (p *pyParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *pyParser) value(depth int) (any, error) {
	if depth > pyMaxDepth {
		return nil, p.errorf("nested too deeply")
	}
	if p.i >= len(p.s) {
		return nil, p.errorf("the text ends where a value should be")
	}
	switch c := p.s[p.i]; {
	case c == '[' || c == '(':
		return p.list(depth)
	case c == '\'' || c == '"':
		return p.str(false, false)
	case c == 'r' || c == 'R' || c == 'u' || c == 'U' || c == 'b' || c == 'B':
		raw, bytesLit := false, false
		j := p.i
		for j < len(p.s) && strings.IndexByte("rRuUbB", p.s[j]) >= 0 && j-p.i < 2 {
			switch p.s[j] {
			case 'r', 'R':
				raw = true
			case 'b', 'B':
				bytesLit = true
			}
			j++
		}
		if j < len(p.s) && (p.s[j] == '\'' || p.s[j] == '"') {
			p.i = j
			return p.str(raw, bytesLit)
		}
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9':
		return p.number()
	}
	for _, kw := range []struct {
		word string
		v    any
	}{{"None", nil}, {"True", true}, {"False", false}} {
		if strings.HasPrefix(p.s[p.i:], kw.word) {
			p.i += len(kw.word)
			return kw.v, nil
		}
	}
	return nil, p.errorf("unexpected %q: only lists, strings, numbers, None, True and False are read", p.rest())
}

func (p *pyParser) list(depth int) (any, error) {
	closer := byte(']')
	if p.s[p.i] == '(' {
		closer = ')'
	}
	p.i++
	out := []any{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == closer {
			p.i++
			return out, nil
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, p.errorf("the text ends inside a list")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case closer:
		default:
			return nil, p.errorf("expected , or %c, found %q", closer, p.rest())
		}
	}
}

func (p *pyParser) number() (any, error) {
	j := p.i
	for j < len(p.s) && strings.IndexByte("+-0123456789.eEjJxXoObB_abcdefABCDEF", p.s[j]) >= 0 {
		j++
	}
	text := p.s[p.i:j]
	if _, err := strconv.ParseFloat(strings.ReplaceAll(text, "_", ""), 64); err != nil {
		if _, err := strconv.ParseInt(strings.ReplaceAll(text, "_", ""), 0, 64); err != nil {
			return nil, p.errorf("%q is not a number", text)
		}
	}
	p.i = j
	return text, nil
}

// str reads a quoted string at p.i.
func (p *pyParser) str(raw, bytesLit bool) (any, error) {
	q := p.s[p.i]
	triple := strings.HasPrefix(p.s[p.i:], strings.Repeat(string(q), 3))
	delim := string(q)
	if triple {
		delim = strings.Repeat(string(q), 3)
	}
	start := p.i
	p.i += len(delim)
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			p.i = start
			return nil, p.errorf("a string that is not closed")
		}
		if strings.HasPrefix(p.s[p.i:], delim) {
			p.i += len(delim)
			return b.String(), nil
		}
		c := p.s[p.i]
		if !triple && c == '\n' {
			return nil, p.errorf("a line break inside a one-line string")
		}
		if c != '\\' {
			r, n := utf8.DecodeRuneInString(p.s[p.i:])
			b.WriteRune(r)
			p.i += n
			continue
		}
		if p.i+1 >= len(p.s) {
			return nil, p.errorf("a backslash at the end")
		}
		e := p.s[p.i+1]
		if raw {
			b.WriteByte('\\')
			b.WriteByte(e)
			p.i += 2
			continue
		}
		p.i += 2
		switch e {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if bytesLit && e != 'x' {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			if p.i+n > len(p.s) {
				return nil, p.errorf("a short \\%c escape", e)
			}
			v, err := strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
			if err != nil || v > utf8.MaxRune {
				return nil, p.errorf("a bad \\%c escape %q", e, p.s[p.i:p.i+n])
			}
			b.WriteRune(rune(v))
			p.i += n
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := p.i - 1
			for j < len(p.s) && j < p.i+2 && p.s[j] >= '0' && p.s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(p.s[p.i-1:j], 8, 32)
			b.WriteRune(rune(v))
			p.i = j
		default:
			// Python keeps an unknown escape as written.
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
}
