package render

// CSV meant to be opened in a spreadsheet (formerly package csvout). Text from data (a comment,
// a model's answer, a field name from someone's ratings file) that begins like a formula is
// neutralized, following OWASP's CSV-injection rule, unless the caller asks for raw output;
// and a UTF-8 byte order mark can lead the file, which Excel needs to read Chinese text as
// UTF-8 rather than in the system's code page.

import (
	"encoding/csv"
	"io"
	"regexp"

	"github.com/spf13/pflag"
)

// CSVOptions shape CSV output.
type CSVOptions struct {
	// Raw writes every cell exactly as given: for scripts, not spreadsheets.
	Raw bool
	// Excel starts the file with a UTF-8 byte order mark.
	Excel bool
}

// AddFlags defines --raw and --excel, which shape a command's CSV format, on fs.
func (o *CSVOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Raw, "raw", false, "CSV: write cells as they are (by default a cell that starts with = + - @ gets a leading ' so a spreadsheet does not run it)")
	fs.BoolVar(&o.Excel, "excel", false, "CSV: start with a UTF-8 byte order mark, so Excel reads Chinese and other non-ASCII text right")
}

// CSVWriter is an encoding/csv Writer that neutralizes cells.
type CSVWriter struct {
	cw  *csv.Writer
	o   CSVOptions
	rec []string
	err error // from writing the byte order mark
}

// bom is the UTF-8 byte order mark.
const bom = "\ufeff"

// NewCSVWriter starts a CSV output on w.
func NewCSVWriter(w io.Writer, o CSVOptions) *CSVWriter {
	cw := &CSVWriter{cw: csv.NewWriter(w), o: o}
	if o.Excel {
		_, cw.err = io.WriteString(w, bom)
	}
	return cw
}

// Write writes one record, each cell neutralized unless Raw.
func (w *CSVWriter) Write(record []string) error {
	if w.err != nil {
		return w.err
	}
	if w.o.Raw {
		return w.cw.Write(record)
	}
	w.rec = w.rec[:0]
	for _, c := range record {
		w.rec = append(w.rec, Neutralize(c))
	}
	return w.cw.Write(w.rec)
}

// Flush writes any buffered data.
func (w *CSVWriter) Flush() { w.cw.Flush() }

// Error reports any error of an earlier Write or Flush.
func (w *CSVWriter) Error() error {
	if w.err != nil {
		return w.err
	}
	return w.cw.Error()
}

// number is a plain decimal number: a spreadsheet reads "-0.25" or "+3" as a number, not a
// formula, so negative statistics stay numbers.
var number = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// Neutralize prefixes a single quote to a cell that a spreadsheet would take for a formula.
// Such a cell begins with =, +, -, @, a tab or a carriage return (OWASP's list) and is not a
// plain number. The quote shows in the cell, which is the point: the text is data.
func Neutralize(cell string) string {
	if cell == "" {
		return cell
	}
	switch cell[0] {
	case '=', '+', '-', '@', '\t', '\r':
		if number.MatchString(cell) {
			return cell
		}
		return "'" + cell
	}
	return cell
}
