package ingest

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sampleXLSX = "testdata/logs/vlmevalkit/Qwen2-VL-7B-Instruct/Qwen2-VL-7B-Instruct_MMDU.xlsx"

// rewriteXLSX copies the sample prediction file to dir/name with one part changed.
func rewriteXLSX(t *testing.T, dir, name, part string, change func([]byte) []byte) string {
	t.Helper()
	zr, err := zip.OpenReader(sampleXLSX)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if f.Name == part {
			b = change(b)
		}
		w, err := zw.Create(f.Name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readXLSX(path string, lim Limits) ([]Record, error) {
	src, closer, err := Open(path, Options{Format: FormatVLMEvalKit, Limits: lim})
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	var out []Record
	for {
		rec, err := src.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, *rec)
	}
}

// TestHostileXLSX: a sheet that names a shared string that does not exist, rows out of
// order, a cell past --max-cell-size and a file past --max-unzipped-size each fail with an
// error that names the sheet, row and cell (or the limit); excelize read the first two
// silently wrong (an empty text, a row dropped).
func TestHostileXLSX(t *testing.T) {
	dir := t.TempDir()
	if recs, err := readXLSX(sampleXLSX, Limits{}); err != nil || len(recs) == 0 {
		t.Fatalf("the sample itself: %d records, %v", len(recs), err)
	}
	sheet := "xl/worksheets/sheet1.xml"
	cases := []struct {
		name, part string
		change     func([]byte) []byte
		lim        Limits
		want       string
	}{
		{"m_index.xlsx", sheet, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`<c r="C3" t="s"><v>8</v>`), []byte(`<c r="C3" t="s"><v>4000</v>`), 1)
		}, Limits{}, `sheet Sheet1, row 3, cell C3: malformed: shared string "4000" does not exist (the file has 13)`},
		{"m_order.xlsx", sheet, func(b []byte) []byte {
			b = bytes.Replace(b, []byte(`<row r="3"`), []byte(`<row r="2"`), 1)
			return b
		}, Limits{}, `sheet Sheet1, row after row 2: malformed: row number "2" (rows must be numbered upwards)`},
		{"m_cellref.xlsx", sheet, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`<c r="B3"`), []byte(`<c r="B7"`), 1)
		}, Limits{}, `sheet Sheet1, row 3, cell B7: malformed: the cell reference "B7" is not in row 3`},
		{"m_xml.xlsx", sheet, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`<c r="D2" t="s"><v>9</v></c>`), []byte(`<c r="D2" t="s"><v>9</c>`), 1)
		}, Limits{}, `sheet Sheet1, row 2, cell D2: malformed XML`},
		{"m_cell.xlsx", "xl/sharedStrings.xml", func(b []byte) []byte {
			return bytes.Replace(b, []byte(`<t>index</t>`), []byte(`<t>index`+strings.Repeat(" ", 5000)+`</t>`), 1)
		}, Limits{MaxCell: 4096}, `xl/sharedStrings.xml: past a size limit: a text or tag of more than 4KB near byte 0 (limit: --max-cell-size 4KB)`},
		{"m_zip.xlsx", sheet, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`<sheetData>`), []byte(`<sheetData>`+strings.Repeat(" ", 3<<20)), 1)
		}, Limits{MaxUnzipped: 1 << 20}, `past a size limit: it unzips to`},
	}
	for _, c := range cases {
		p := rewriteXLSX(t, dir, c.name, c.part, c.change)
		recs, err := readXLSX(p, c.lim)
		if err == nil || !strings.Contains(err.Error(), p+": ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %d records, error %v\nwant %q", c.name, len(recs), err, c.want)
		}
		if c.lim != (Limits{}) && !errors.Is(err, ErrLimit) {
			t.Errorf("%s: %v is not ErrLimit", c.name, err)
		}
	}
}

// TestRecordSizeLimit: a JSON line or a value of a JSON array longer than --max-record-size
// fails with the file, the line and the limit, after reading no more of it than that.
func TestRecordSizeLimit(t *testing.T) {
	rest := `"action_type":"follow_up","task_type":"t","vlm_response":"v","expected_answer":"e"}`
	long := `{"sample_id":"a_turn_2","user_message":"` + strings.Repeat("x", 600<<10) + `",` + rest
	short := `{"sample_id":"a_turn_1","user_message":"hi",` + rest
	for name, src := range map[string]string{
		"lines.jsonl": short + "\n" + long + "\n",
		"array.json":  "[\n" + short + ",\n" + long + "\n]",
	} {
		rd := NewReader(name, strings.NewReader(src))
		rd.SetLimits(Limits{MaxRecord: 512 << 10})
		var err error
		n := 0
		for err == nil {
			if _, err = rd.Next(); err == nil {
				n++
			}
		}
		want := name + ":2: past a size limit: a record longer than 512KB (limit: --max-record-size 512KB)"
		if n != 1 || err == nil || err.Error() != want || !errors.Is(err, ErrLimit) {
			t.Errorf("%s: %d records, %v\nwant %s", name, n, err, want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"64MB": 64 << 20, "512kb": 512 << 10, "1GB": 1 << 30, "1000": 1000, " 2 MB ": 2 << 20} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
		if in == "64MB" && FormatSize(want) != "64MB" {
			t.Errorf("FormatSize(%d) = %s", want, FormatSize(want))
		}
	}
	for _, bad := range []string{"", "0", "-1MB", "1TB", "lots"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) took it", bad)
		}
	}
}

// TestLoneSurrogate: an escaped UTF-16 surrogate without its other half is an error naming
// the file and line, like invalid UTF-8, not a silent U+FFFD; pairs and an escaped backslash
// before "ud800" are fine.
func TestLoneSurrogate(t *testing.T) {
	rec := func(msg string) string {
		return `{"sample_id":"a_turn_1","action_type":"follow_up","task_type":"t","user_message":"` + msg + `","vlm_response":"v","expected_answer":"e"}`
	}
	for msg, want := range map[string]string{
		`x\ud800y`:        `in.jsonl:2: bad record: a lone surrogate \ud800 is not a character`,
		`x\udc00`:         `in.jsonl:2: bad record: a lone surrogate \udc00 is not a character`,
		`\ud83d\ude00 ok`: "",
		`\\ud800 text`:    "",
	} {
		for _, format := range []Format{FormatM3eval, FormatOpenAI} {
			src := rec("fine") + "\n" + rec(msg) + "\n"
			if format == FormatOpenAI {
				line := `{"messages":[{"role":"user","content":"MSG"},{"role":"assistant","content":"a"}]}`
				src = strings.Replace(line, "MSG", "fine", 1) + "\n" + strings.Replace(line, "MSG", msg, 1) + "\n"
			}
			rd, err := NewSource("in.jsonl", strings.NewReader(src), Options{Format: format})
			if err != nil {
				t.Fatal(err)
			}
			var got error
			for got == nil {
				_, got = rd.Next()
			}
			if got == io.EOF {
				got = nil
			}
			if want == "" && got != nil || want != "" && (got == nil || !strings.Contains(got.Error(), want)) {
				t.Errorf("%s %q: %v, want %q", format, msg, got, want)
			}
		}
	}
}

// TestXLSXPartsCounted (#38 item 4): an xlsx of tens of thousands of tiny parts, each of which
// costs excelize memory, is refused before excelize opens it, however little it unzips to.
func TestXLSXPartsCounted(t *testing.T) {
	zr, err := zip.OpenReader(sampleXLSX)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	p := filepath.Join(t.TempDir(), "parts.xlsx")
	out, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(out)
	for _, f := range zr.File {
		if err := zw.Copy(f); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < maxXLSXParts; i++ {
		if _, err := zw.Create(fmt.Sprintf("xl/media/pad%05d.bin", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	out.Close()
	_, err = readXLSX(p, Limits{})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), fmt.Sprintf("more than the %d a spreadsheet has", maxXLSXParts)) {
		t.Errorf("an xlsx of %d parts: %v", maxXLSXParts+len(zr.File), err)
	}
}
