package ingest

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
)

// Limits bound what one record of an input may cost in memory. A hostile or broken file (a
// zip bomb, a 100 MB line, a 300 MB cell) then fails with one clear error instead of taking
// gigabytes. Zero fields take the defaults.
type Limits struct {
	// MaxRecord is the longest record (a JSON line, a JSON value) read, in bytes.
	MaxRecord int64
	// MaxCell is the longest cell text (or XML tag) of a spreadsheet, in bytes.
	MaxCell int64
	// MaxUnzipped is the most an xlsx file may unzip to, all its parts together, in bytes.
	MaxUnzipped int64
}

// The default limits. They lie far above what a benchmark log holds (a record with a few
// embedded images is a few MB), and far below what would exhaust a laptop's memory.
const (
	DefaultMaxRecord   = 16 << 20
	DefaultMaxCell     = 8 << 20
	DefaultMaxUnzipped = 1 << 30
)

// ErrLimit marks an input past one of the Limits.
var ErrLimit = errors.New("past a size limit")

func (l Limits) withDefaults() Limits {
	if l.MaxRecord <= 0 {
		l.MaxRecord = DefaultMaxRecord
	}
	if l.MaxCell <= 0 {
		l.MaxCell = DefaultMaxCell
	}
	if l.MaxUnzipped <= 0 {
		l.MaxUnzipped = DefaultMaxUnzipped
	}
	return l
}

// FormatSize writes a byte count the way the limit flags take it back (64MB, 1GB, 512KB).
func FormatSize(n int64) string {
	for _, u := range []struct {
		unit string
		size int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.unit
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// ParseSize reads a size such as 64MB, 512KB, 1GB or a number of bytes (units are powers
// of 1024).
func ParseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		unit string
		size int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.unit) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.unit)), u.size
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q: give a size such as 64MB, 512KB or 1GB", s)
	}
	return n * mult, nil
}

// maxXLSXParts is the most parts an xlsx file may hold: a workbook has a few dozen (sheets,
// styles, relations, images), a few thousand with many sheets or images.
const maxXLSXParts = 10000

// checkXLSX reads an xlsx file's parts once, as a stream, before excelize opens it:
// excelize reads a cell's (or a shared string's) whole text into memory, and extracts the
// parts it needs, so a 2 MB zip of 2 GB of whitespace took 4 GB. It refuses a file that
// unzips to more than MaxUnzipped (from the zip's directory, which archive/zip holds each
// part to), any text or tag longer than MaxCell, and a first sheet whose rows or cells are
// malformed or name a shared string that does not exist, which excelize would drop or read
// as empty. (Written by hand: excelize has a total unzip limit but none per cell, and it
// does not check these.)
func checkXLSX(name string, lim Limits) error {
	lim = lim.withDefaults()
	zr, err := zip.OpenReader(name)
	if err != nil {
		return fmt.Errorf("%s: not a readable xlsx file: %w", name, err)
	}
	defer zr.Close()
	if len(zr.File) > maxXLSXParts {
		// Each part costs excelize memory whatever its size: 200,000 parts took 942 MB.
		return fmt.Errorf("%s: %w: %d parts in the zip, more than the %d a spreadsheet has", name, ErrLimit, len(zr.File), maxXLSXParts)
	}
	var total uint64
	parts := map[string]*zip.File{}
	for _, f := range zr.File {
		total += f.UncompressedSize64
		parts[f.Name] = f
	}
	if total > uint64(lim.MaxUnzipped) {
		return fmt.Errorf("%s: %w: it unzips to %.1f GB, more than --max-unzipped-size %s", name, ErrLimit, float64(total)/(1<<30), FormatSize(lim.MaxUnzipped))
	}
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, ".xml") && !strings.HasSuffix(f.Name, ".rels") {
			continue
		}
		if err := checkTokens(f, lim.MaxCell); err != nil {
			return fmt.Errorf("%s: %s: %w", name, f.Name, err)
		}
	}
	sheetName, sheetPart, err := firstSheet(parts)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	shared := 0
	if f := parts["xl/sharedStrings.xml"]; f != nil {
		if shared, err = countShared(f); err != nil {
			return fmt.Errorf("%s: xl/sharedStrings.xml: malformed: %w", name, err)
		}
	}
	f := parts[sheetPart]
	if f == nil {
		return fmt.Errorf("%s: sheet %s: its part %s is missing", name, sheetName, sheetPart)
	}
	if err := checkSheet(f, shared); err != nil {
		return fmt.Errorf("%s: sheet %s, %w", name, sheetName, err)
	}
	return nil
}

// checkTokens streams a part and fails at the first text or tag longer than max bytes:
// the distance between two '<' bounds both.
func checkTokens(f *zip.File, max int64) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	buf := make([]byte, 64<<10)
	var run, off int64
	for {
		n, err := rc.Read(buf)
		b := buf[:n]
		for len(b) > 0 {
			i := bytes.IndexByte(b, '<')
			if i < 0 {
				run += int64(len(b))
				break
			}
			run += int64(i)
			if run > max {
				break
			}
			run, b = 0, b[i+1:]
		}
		if run > max {
			return fmt.Errorf("%w: a text or tag of more than %s near byte %d (limit: --max-cell-size %s)", ErrLimit, FormatSize(max), off, FormatSize(max))
		}
		off += int64(n)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// firstSheet finds the first sheet's name and part, as the workbook and its relationships
// list them (the sheet excelize's GetSheetList puts first).
func firstSheet(parts map[string]*zip.File) (name, part string, err error) {
	var wb struct {
		Sheets []struct {
			Name string `xml:"name,attr"`
			RID  string `xml:"http://schemas.openxmlformats.org/officeDocument/2006/relationships id,attr"`
		} `xml:"sheets>sheet"`
	}
	var rels struct {
		Rels []struct {
			ID     string `xml:"Id,attr"`
			Target string `xml:"Target,attr"`
		} `xml:"Relationship"`
	}
	for _, p := range []struct {
		name string
		v    any
	}{{"xl/workbook.xml", &wb}, {"xl/_rels/workbook.xml.rels", &rels}} {
		f := parts[p.name]
		if f == nil {
			return "", "", fmt.Errorf("not an xlsx workbook: no %s", p.name)
		}
		rc, err := f.Open()
		if err != nil {
			return "", "", err
		}
		err = xml.NewDecoder(rc).Decode(p.v)
		rc.Close()
		if err != nil {
			return "", "", fmt.Errorf("%s: malformed: %w", p.name, err)
		}
	}
	if len(wb.Sheets) == 0 {
		return "", "", fmt.Errorf("no sheet")
	}
	s := wb.Sheets[0]
	for _, r := range rels.Rels {
		if r.ID == s.RID {
			t := r.Target
			if strings.HasPrefix(t, "/") {
				return s.Name, strings.TrimPrefix(t, "/"), nil
			}
			return s.Name, path.Join("xl", t), nil
		}
	}
	return "", "", fmt.Errorf("sheet %s: no part for it in xl/_rels/workbook.xml.rels", s.Name)
}

// countShared counts the shared strings (<si> elements).
func countShared(f *zip.File) (int, error) {
	rc, err := f.Open()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	d := xml.NewDecoder(bufio.NewReaderSize(rc, 64<<10))
	n := 0
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "si" {
			n++
		}
	}
}

// checkSheet checks a sheet's rows and cells: rows numbered upwards, each cell's reference
// in its row, a shared-string cell naming one that exists. It returns "row N, cell REF: ..."
// for the caller to prefix with the sheet.
func checkSheet(f *zip.File, shared int) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	d := xml.NewDecoder(bufio.NewReaderSize(rc, 64<<10))
	row, prevRow := 0, 0
	cell, cellType := "", ""
	inValue := false
	var value strings.Builder
	where := func() string {
		if cell != "" {
			return fmt.Sprintf("row %d, cell %s", row, cell)
		}
		return fmt.Sprintf("row %d", row)
	}
	for {
		tok, err := d.Token() // not RawToken: Token checks that the tags match
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: malformed XML: %v", where(), err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "row":
				cell = ""
				r := attr(t, "r")
				if r == "" {
					row = prevRow + 1
				} else if row, err = strconv.Atoi(r); err != nil || row <= prevRow {
					row = prevRow + 1
					return fmt.Errorf("row after row %d: malformed: row number %q (rows must be numbered upwards)", prevRow, r)
				}
				prevRow = row
			case "c":
				cell, cellType = attr(t, "r"), attr(t, "t")
				if cell != "" {
					if n, err := cellRow(cell); err != nil || n != row {
						return fmt.Errorf("%s: malformed: the cell reference %q is not in row %d", where(), cell, row)
					}
				}
			case "v":
				inValue = true
				value.Reset()
			}
		case xml.CharData:
			if inValue {
				value.Write(t)
			}
		case xml.EndElement:
			if t.Name.Local == "v" {
				inValue = false
				if cellType == "s" {
					i, err := strconv.Atoi(strings.TrimSpace(value.String()))
					if err != nil || i < 0 || i >= shared {
						return fmt.Errorf("%s: malformed: shared string %q does not exist (the file has %d)", where(), value.String(), shared)
					}
				}
			}
			if t.Name.Local == "c" {
				cell, cellType = "", ""
			}
		}
	}
}

func attr(se xml.StartElement, name string) string {
	for _, a := range se.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// cellRow is the row number of a cell reference such as B12.
func cellRow(ref string) (int, error) {
	i := strings.IndexFunc(ref, func(r rune) bool { return r >= '0' && r <= '9' })
	if i <= 0 {
		return 0, fmt.Errorf("no row in %q", ref)
	}
	return strconv.Atoi(ref[i:])
}
