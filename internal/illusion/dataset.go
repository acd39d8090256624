package illusion

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/m3bench/m3eval/internal/outfile"
)

// Format is the file format of a split: Hugging Face Parquet or JSON Lines.
type Format int

// The split formats.
const (
	FormatParquet Format = iota
	FormatJSONL
)

// Ext is the file extension written for the format.
func (f Format) Ext() string {
	if f == FormatJSONL {
		return ".jsonl"
	}
	return ".parquet"
}

// String implements fmt.Stringer.
func (f Format) String() string {
	if f == FormatJSONL {
		return "jsonl"
	}
	return "parquet"
}

// ImageNameColumn is the column (Parquet) or field (JSONL) holding the image name.
const ImageNameColumn = "image_name"

// DetectFormat tells Parquet from JSONL by the Parquet magic number, so that a file named
// without an extension (or a .json one) is still read correctly.
func DetectFormat(path string) (Format, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	magic := make([]byte, 4)
	if _, err := io.ReadFull(f, magic); err == nil && string(magic) == "PAR1" {
		return FormatParquet, nil
	}
	return FormatJSONL, nil
}

// OutputName is the guide's file name for a split's test set, e.g.
// illusion_icon_test1000.parquet.
func OutputName(split string, n int, f Format) string {
	return strings.ToLower(split) + "_test" + strconv.Itoa(n) + f.Ext()
}

// ReadNames returns the image_name of every row of a split, in order: the files are the
// shards of the split (Illusion_ICON-00000-of-00003.parquet, ...) and are read one after
// the other, as datasets concatenates them.
func ReadNames(ctx context.Context, paths []string, f Format) ([]string, error) {
	var names []string
	for _, p := range paths {
		var more []string
		var err error
		if f == FormatJSONL {
			more, err = readJSONLNames(ctx, p)
		} else {
			more, err = readParquetNames(ctx, p)
		}
		if err != nil {
			return nil, err
		}
		names = append(names, more...)
	}
	return names, nil
}

// CopyRows writes the rows of the split stored in srcs (its shards, in order) whose 0-based
// numbers are in indices (sorted ascending) to dst in the same format, leaving every byte
// of their content untouched. The file appears whole or not at all (outfile.Replace), so that
// an interrupted run leaves no truncated test set behind.
func CopyRows(ctx context.Context, srcs []string, dst string, f Format, indices []int) error {
	if len(srcs) == 0 {
		return errors.New("no input files")
	}
	return outfile.Replace(dst, 0, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		var err error
		if f == FormatJSONL {
			err = copyJSONLRows(ctx, srcs, bw, indices)
		} else {
			err = copyParquetRows(ctx, srcs, bw, indices)
		}
		if err != nil {
			return err
		}
		return bw.Flush()
	})
}

// openParquet opens a Parquet file and finds its image_name column.
func openParquet(path string) (*os.File, *parquet.File, parquet.LeafColumn, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, parquet.LeafColumn{}, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, nil, parquet.LeafColumn{}, err
	}
	pf, err := parquet.OpenFile(fh, st.Size(), parquet.SkipBloomFilters(true))
	if err != nil {
		fh.Close()
		return nil, nil, parquet.LeafColumn{}, fmt.Errorf("%s: not a readable Parquet file: %w", path, err)
	}
	leaf, ok := pf.Schema().Lookup(ImageNameColumn)
	if !ok || leaf.MaxRepetitionLevel != 0 || leaf.Node.Type().Kind() != parquet.ByteArray {
		fh.Close()
		return nil, nil, parquet.LeafColumn{}, fmt.Errorf("%s: no top-level string column %q (the Hugging Face IllusionBench schema has image and image_name)", path, ImageNameColumn)
	}
	return fh, pf, leaf, nil
}

func readParquetNames(ctx context.Context, path string) ([]string, error) {
	fh, pf, leaf, err := openParquet(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	names := make([]string, 0, pf.NumRows())
	buf := make([]parquet.Value, 1024)
	for _, rg := range pf.RowGroups() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pages := rg.ColumnChunks()[leaf.ColumnIndex].Pages()
		for {
			page, err := pages.ReadPage()
			if err == io.EOF {
				break
			}
			if err != nil {
				pages.Close()
				return nil, fmt.Errorf("%s: column %s: %w", path, ImageNameColumn, err)
			}
			vr := page.Values()
			for {
				n, err := vr.ReadValues(buf)
				for _, v := range buf[:n] {
					if v.IsNull() {
						pages.Close()
						parquet.Release(page)
						return nil, fmt.Errorf("%s: row %d: %s is null", path, len(names), ImageNameColumn)
					}
					names = append(names, string(v.ByteArray()))
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					pages.Close()
					parquet.Release(page)
					return nil, fmt.Errorf("%s: column %s: %w", path, ImageNameColumn, err)
				}
			}
			parquet.Release(page)
		}
		pages.Close()
	}
	if int64(len(names)) != pf.NumRows() {
		return nil, fmt.Errorf("%s: read %d image names but the file has %d rows", path, len(names), pf.NumRows())
	}
	return names, nil
}

// copyParquetRows streams the selected rows into a writer with the input's schema, codec
// and key-value metadata (the "huggingface" features entry included), so that datasets
// loads the output exactly like the input; every shard must have the first one's schema.
// Row groups without a selected row are not read; the output is flushed as a row group
// whenever the buffered rows reach the size of the largest input row group, which bounds
// memory by about one row group.
func copyParquetRows(ctx context.Context, paths []string, out io.Writer, indices []int) error {
	fh, pf, _, err := openParquet(paths[0])
	if err != nil {
		return err
	}
	meta := pf.Metadata()
	schema := pf.Schema()
	opts := []parquet.WriterOption{schema}
	for _, kv := range meta.KeyValueMetadata {
		opts = append(opts, parquet.KeyValueMetadata(kv.Key, kv.Value))
	}
	// The first column chunk's codec stands for the file: writers use one codec throughout.
	if len(meta.RowGroups) > 0 && len(meta.RowGroups[0].Columns) > 0 {
		opts = append(opts, parquet.Compression(parquet.LookupCompressionCodec(meta.RowGroups[0].Columns[0].MetaData.Codec)))
	}
	// pyarrow writes data pages v1 (parquet-go's default is v2) and keeps no min/max of a
	// column chunk whose min or max is longer than 4 KB (Arrow's max_statistics_size);
	// parquet-go would store both whole, two PNGs per row group in the footer.
	opts = append(opts, parquet.DataPageVersion(1))
	for _, path := range largeStatColumns(meta, schema) {
		opts = append(opts, parquet.SkipPageBounds(path...), parquet.SkipPageStatistics(path...))
	}
	fh.Close()
	w := parquet.NewWriter(out, opts...)
	c := &parquetCopier{w: w, indices: indices, flushAt: 1 << 20, rows: make([]parquet.Row, 16)}
	for _, p := range paths {
		if err := c.copyFile(ctx, p, schema); err != nil {
			return err
		}
	}
	if c.next < len(indices) {
		return fmt.Errorf("%s: row %d selected but the split has %d rows", paths[len(paths)-1], indices[c.next], c.base)
	}
	return w.Close()
}

// maxStatisticsSize is pyarrow's cap on a min or max value kept in column statistics.
const maxStatisticsSize = 4096

// largeStatColumns lists the byte-array columns whose statistics pyarrow would drop (it
// keeps no min or max over 4 KB): binary columns, whose values are images (pyarrow keeps
// the statistics of a chunk of images under 4 KB, which no reader needs; the copy cannot
// know its output chunks' min and max before writing them), and text columns where a
// chunk of the input has a min or max over 4 KB or values without a min/max. Columns with
// small text, such as image_name and image.path, keep theirs.
func largeStatColumns(meta *format.FileMetaData, schema *parquet.Schema) [][]string {
	var out [][]string
	for ci, leaf := range schema.Columns() {
		col, ok := schema.Lookup(leaf...)
		if !ok || col.Node.Type().Kind() != parquet.ByteArray {
			continue
		}
		if !isText(col.Node.Type()) {
			out = append(out, leaf)
			continue
		}
		for _, rg := range meta.RowGroups {
			if ci >= len(rg.Columns) {
				continue
			}
			md := rg.Columns[ci].MetaData
			st := md.Statistics
			noBounds := st.MinValue == nil && st.MaxValue == nil && st.Min == nil && st.Max == nil &&
				md.NumValues > st.NullCount
			if noBounds || max(len(st.MinValue), len(st.MaxValue), len(st.Min), len(st.Max)) > maxStatisticsSize {
				out = append(out, leaf)
				break
			}
		}
	}
	return out
}

// isText tells a string column (UTF8, as datasets writes image_name) from raw bytes.
func isText(t parquet.Type) bool {
	if lt := t.LogicalType(); lt != nil {
		switch lt.Value.(type) {
		case *format.StringType, *format.JsonType, *format.EnumType:
			return true
		}
	}
	ct := t.ConvertedType()
	return ct != nil && (*ct == deprecated.UTF8 || *ct == deprecated.Json || *ct == deprecated.Enum)
}

// parquetCopier carries the position in the selection across the shards of a split.
type parquetCopier struct {
	//lint:ignore SA1019 rows are copied under the schema read from the input file; the GenericWriter that replaces Writer needs a Go type for them
	w        *parquet.Writer
	indices  []int
	next     int   // position in indices
	base     int64 // split row number of the current row group's first row
	buffered int64 // bytes written since the last flush, roughly
	flushAt  int64
	rows     []parquet.Row
}

func (c *parquetCopier) copyFile(ctx context.Context, path string, schema *parquet.Schema) error {
	fh, pf, _, err := openParquet(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	if pf.Schema().String() != schema.String() {
		return fmt.Errorf("%s: schema differs from the split's first file:\n%s", path, pf.Schema())
	}
	for _, rg := range pf.Metadata().RowGroups {
		c.flushAt = max(c.flushAt, rg.TotalByteSize)
	}
	for _, rg := range pf.RowGroups() {
		end := c.base + rg.NumRows()
		if c.next >= len(c.indices) || int64(c.indices[c.next]) >= end {
			c.base = end
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := c.copyRowGroup(rg, end); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if c.buffered >= c.flushAt {
			if err := c.w.Flush(); err != nil {
				return err
			}
			c.buffered = 0
		}
		c.base = end
	}
	return nil
}

func (c *parquetCopier) copyRowGroup(rg parquet.RowGroup, end int64) error {
	r := rg.Rows()
	defer r.Close()
	pos := int64(c.indices[c.next])
	if err := r.SeekToRow(pos - c.base); err != nil {
		return err
	}
	for c.next < len(c.indices) && int64(c.indices[c.next]) < end {
		n, err := r.ReadRows(c.rows)
		for _, row := range c.rows[:n] {
			if c.next < len(c.indices) && int64(c.indices[c.next]) == pos {
				if _, err := c.w.WriteRows([]parquet.Row{row}); err != nil {
					return err
				}
				for _, v := range row {
					if !v.IsNull() && v.Kind() == parquet.ByteArray {
						c.buffered += int64(len(v.ByteArray()))
					} else {
						c.buffered += 8
					}
				}
				c.next++
			}
			pos++
		}
		if err == io.EOF && n == 0 {
			break
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("row %d: %w", pos, err)
		}
	}
	return nil
}

// jsonlLines calls fn for every non-blank line of a JSONL file with its 1-based line number
// and its 0-based row number. Lines are read whole, however long (rows may embed images).
func jsonlLines(ctx context.Context, path string, fn func(line []byte, lineNo, row int) error) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	br := bufio.NewReaderSize(fh, 1<<20)
	row := 0
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && len(bytes.TrimSpace(line)) > 0 {
			if lineNo%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if ferr := fn(line, lineNo, row); ferr != nil {
				return ferr
			}
			row++
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, lineNo, err)
		}
	}
}

func readJSONLNames(ctx context.Context, path string) ([]string, error) {
	var names []string
	err := jsonlLines(ctx, path, func(line []byte, lineNo, _ int) error {
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(line, &rec); err != nil {
			return fmt.Errorf("%s:%d: not a JSON object: %w", path, lineNo, err)
		}
		raw, ok := rec[ImageNameColumn]
		if !ok {
			return fmt.Errorf("%s:%d: field %s: missing", path, lineNo, ImageNameColumn)
		}
		var name string
		if err := json.Unmarshal(raw, &name); err != nil {
			return fmt.Errorf("%s:%d: field %s: not a string: %s", path, lineNo, ImageNameColumn, raw)
		}
		names = append(names, name)
		return nil
	})
	return names, err
}

// copyJSONLRows writes the selected lines verbatim; a last line without a newline gets one.
func copyJSONLRows(ctx context.Context, paths []string, out io.Writer, indices []int) error {
	next, base := 0, 0
	for _, p := range paths {
		rows := 0
		err := jsonlLines(ctx, p, func(line []byte, _, row int) error {
			rows++
			if next >= len(indices) || indices[next] != base+row {
				return nil
			}
			next++
			if _, err := out.Write(line); err != nil {
				return err
			}
			if line[len(line)-1] != '\n' {
				_, err := out.Write([]byte{'\n'})
				return err
			}
			return nil
		})
		if err != nil {
			return err
		}
		base += rows
	}
	if next < len(indices) {
		return fmt.Errorf("%s: row %d selected but the split has %d rows", paths[len(paths)-1], indices[next], base)
	}
	return nil
}
