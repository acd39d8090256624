// Package lineindex turns byte offsets of a stream into line numbers for error messages. It
// sits under the buffered readers and JSON decoders of the importers and remembers only the
// newlines they have read ahead but not yet asked about, so memory stays bounded by their
// buffers however long the file. Written by hand: no library keeps a bounded offset→line map.
package lineindex

import (
	"bytes"
	"io"
)

// Reader passes reads through and records where the newlines are. Offsets given to LineAt
// must not decrease (records are read in order); one that does gets the current line.
type Reader struct {
	r      io.Reader
	read   int64   // bytes read so far
	nl     []int64 // offsets of newlines at or after the last query
	before int     // newlines before the last query offset
	last   int64
	lastNL bool // the last byte read is a newline
}

// New returns a Reader that reads r. linesBefore is the number of lines that came before
// r's first byte.
func New(r io.Reader, linesBefore int) *Reader {
	return &Reader{r: r, before: linesBefore}
}

// Read implements io.Reader.
func (c *Reader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i := 0; i < n; {
		j := bytes.IndexByte(p[i:n], '\n')
		if j < 0 {
			break
		}
		c.nl = append(c.nl, c.read+int64(i+j))
		i += j + 1
	}
	c.read += int64(n)
	if n > 0 {
		c.lastNL = p[n-1] == '\n'
	}
	return n, err
}

// Consumed is the number of bytes read so far.
func (c *Reader) Consumed() int64 { return c.read }

// LineAt returns the 1-based line of byte offset off.
func (c *Reader) LineAt(off int64) int {
	if off < c.last {
		return c.before + 1
	}
	k := 0
	for k < len(c.nl) && c.nl[k] < off {
		k++
	}
	c.before += k
	c.nl = c.nl[k:]
	c.last = off
	return c.before + 1
}

// LastLine returns the number of the last line read, not counting an empty one after a
// final newline.
func (c *Reader) LastLine() int {
	if c.lastNL {
		return c.LineAt(c.read - 1)
	}
	return c.LineAt(c.read)
}
