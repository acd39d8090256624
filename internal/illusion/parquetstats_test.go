package illusion

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// TestParquetOutputLikePyarrow: the test set's footer keeps no min/max of the image bytes
// (over 4 KB, as pyarrow drops them) but keeps image_name's, and every data page is v1.
func TestParquetOutputLikePyarrow(t *testing.T) {
	dir := t.TempDir()
	names := synthNames(200, 5, []int{34, 67, 99}, false)
	in := filepath.Join(dir, "Illusion_ICON.parquet")
	writeHFParquet(t, in, names, 50, 40) // 40x40 noise: about 6.4 KB a PNG
	res, err := BuildTestSets(context.Background(), []SplitInput{{"Illusion_ICON", []string{in}}}, 60, 42, filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out", res[0].OutputFile)
	_, pf := readHFParquet(t, out)
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	meta := pf.Metadata()
	if len(meta.RowGroups) == 0 {
		t.Fatal("no row groups")
	}
	for gi, rg := range meta.RowGroups {
		for _, cc := range rg.Columns {
			md := cc.MetaData
			path := filepath.Join(md.PathInSchema...)
			st := md.Statistics
			switch path {
			case "image/bytes":
				if st.MinValue != nil || st.MaxValue != nil || st.Min != nil || st.Max != nil {
					t.Errorf("row group %d: %s keeps statistics of %d and %d bytes", gi, path, len(st.MinValue), len(st.MaxValue))
				}
			case ImageNameColumn:
				if len(st.MinValue) == 0 || len(st.MaxValue) == 0 {
					t.Errorf("row group %d: %s lost its statistics", gi, path)
				}
			}
			// Walk the pages of the chunk: no page may be a data page v2.
			off := md.DataPageOffset
			if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < off {
				off = md.DictionaryPageOffset
			}
			end := off + md.TotalCompressedSize
			for off < end {
				var h format.PageHeader
				r := bytes.NewReader(raw[off:end])
				if err := thrift.NewDecoder((&thrift.CompactProtocol{}).NewReader(r)).Decode(&h); err != nil {
					t.Fatalf("%s: page header at %d: %v", path, off, err)
				}
				if h.Type == format.DataPageV2 {
					t.Fatalf("row group %d, %s: a data page v2", gi, path)
				}
				hdr := int64(len(raw[off:end])) - int64(r.Len())
				off += hdr + int64(h.CompressedPageSize)
			}
		}
	}
}
