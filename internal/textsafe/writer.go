package textsafe

import (
	"bytes"
	"fmt"
	"io"
	"unicode/utf8"
)

// NewWriter returns a Writer that passes text to w made safe as String makes it. Control
// characters are made visible, and newlines and tabs kept. It is for CSV, JSON or any text a
// command prints to a terminal, where a cell from data must not act on the screen. A file or
// a pipe gets the bytes as they are.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, fix: func(dst *bytes.Buffer, chunk []byte) { dst.WriteString(String(string(chunk))) }}
}

// NewJSONWriter returns a Writer for JSON text that escapes some characters as \uXXXX. They
// are those encoding/json leaves raw but a terminal or an editor acts on: DEL, the C1 controls
// (U+009B is CSI) and the bidirectional controls (U+202E). Inside a JSON string such an
// escape means the same character, so a file stays faithful; outside strings JSON has none
// of them. encoding/json already escapes the C0 controls and U+2028/U+2029.
func NewJSONWriter(w io.Writer) *Writer {
	return &Writer{w: w, fix: escapeJSON}
}

func escapeJSON(dst *bytes.Buffer, chunk []byte) {
	for i := 0; i < len(chunk); {
		c := chunk[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				dst.WriteString(`\u007f`)
			} else {
				dst.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(chunk[i:])
		if isC1(r) || isBidi(r) {
			fmt.Fprintf(dst, `\u%04x`, r)
		} else {
			dst.Write(chunk[i : i+n])
		}
		i += n
	}
}

// Writer is an io.Writer that makes text safe for a terminal on its way to another writer.
// It works on whole runes: a rune split between two writes waits for its last bytes, and
// Flush writes what is left at the end.
type Writer struct {
	w       io.Writer
	fix     func(dst *bytes.Buffer, chunk []byte)
	pending []byte
	out     bytes.Buffer
}

// Write implements io.Writer.
func (rw *Writer) Write(p []byte) (int, error) {
	data := p
	if len(rw.pending) > 0 {
		data = append(rw.pending, p...)
		rw.pending = nil
	}
	// Hold back an incomplete rune at the end (at most 3 bytes).
	cut := len(data)
	for k := 1; k <= 3 && k <= len(data); k++ {
		c := data[len(data)-k]
		if c < utf8.RuneSelf {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(data[len(data)-k:]) {
				cut = len(data) - k
			}
			break
		}
	}
	rw.pending = append(rw.pending[:0], data[cut:]...)
	rw.out.Reset()
	rw.fix(&rw.out, data[:cut])
	if _, err := rw.w.Write(rw.out.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes the bytes held back at the end. They are an incomplete rune, so invalid
// UTF-8.
func (rw *Writer) Flush() error {
	if len(rw.pending) == 0 {
		return nil
	}
	rw.out.Reset()
	rw.fix(&rw.out, rw.pending)
	rw.pending = nil
	_, err := rw.w.Write(rw.out.Bytes())
	return err
}
