package ingest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMapDelimited: import --map reads a CSV (or TSV) table, its columns as the record's
// keys: a ratings table item,rater,score with the question and the answer. Cells are text
// and coerced as JSON text is; an empty cell is no value; errors name the file's own line,
// also after a quoted cell of several lines.
func TestMapDelimited(t *testing.T) {
	dir := t.TempDir()
	maps := []string{"sample_id=item", "annotator=rater", "label.overall_quality=score", "user_message=question", "vlm_response=response"}
	p := filepath.Join(dir, "ratings.csv")
	os.WriteFile(p, []byte("\ufeffitem,rater,score,question,response\n"+
		"7,张三,4,\"图中有几只猫？\n两行\",两只。\n"+
		"8,li,,q8,r8\n"), 0o644)
	recs, err := tryReadAll(p, "", nil, maps...)
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	tu := recs[0].Turn
	if tu.SampleID != "7" || tu.UserMessage != "图中有几只猫？\n两行" || tu.VLMResponse != "两只。" {
		t.Errorf("turn %+v", tu)
	}
	if len(recs[0].Labels) != 1 || string(recs[0].Labels[0].Fields["overall_quality"]) != `"4"` || string(recs[0].Labels[0].Fields["annotator"]) != `"张三"` {
		t.Errorf("labels %+v", recs[0].Labels)
	}
	if len(recs[1].Labels) != 0 {
		t.Errorf("an empty score cell made a label: %+v", recs[1].Labels)
	}
	os.WriteFile(p, []byte("item,rater,score,question,response\n7,a,4,\"two\nlines\",r\n8,b,5,,r8\n"), 0o644)
	_, err = tryReadAll(p, "", nil, maps...)
	if err == nil || !strings.Contains(err.Error(), "ratings.csv:4: question (mapped to user_message): bad record: missing") {
		t.Errorf("an empty question cell on line 4: %v", err)
	}
	os.WriteFile(p, []byte("item,rater,score\n7,a\n"), 0o644)
	_, err = tryReadAll(p, "", nil, maps...)
	if err == nil || !strings.Contains(err.Error(), "ratings.csv:2: bad record: 2 cells for the header's 3 columns") {
		t.Errorf("a short row: %v", err)
	}
	tsv := filepath.Join(dir, "ratings.tsv")
	os.WriteFile(tsv, []byte("item\trater\tscore\tquestion\tresponse\n7\ta\t3\tq\tr\n"), 0o644)
	recs, err = tryReadAll(tsv, "", nil, maps...)
	if err != nil || len(recs) != 1 || string(recs[0].Labels[0].Fields["overall_quality"]) != `"3"` {
		t.Errorf("tsv: %+v, %v", recs, err)
	}
}
