package ingest_test

import (
	"strings"
	"testing"
)

// TestStrictBytesAndKeys: invalid UTF-8 and a key given twice are errors naming file, line and
// field (encoding/json would put U+FFFD in the text, or keep the last value), and a broken
// record is reported on its own line.
func TestStrictBytesAndKeys(t *testing.T) {
	good := turnLine
	twice := strings.Replace(good, `"task_type":"t"`, `"task_type":"t","task_type":"u"`, 1)
	labelTwice := strings.TrimSuffix(good, "}") + `,"human_annotation":{"correctness":5,"comments":"a","correctness":1}}`
	badUTF8 := strings.Replace(good, `"vlm_response":"v"`, "\"vlm_response\":\"caf\xe9\"", 1)
	tests := []struct{ name, src, want string }{
		{"duplicate key, jsonl", good + "\n" + twice + "\n", "f:2: task_type: bad record: the key is given twice"},
		{"duplicate key in a label", good + "\n" + good + "\n" + labelTwice + "\n", "f:3: human_annotation.correctness: bad record: the key is given twice"},
		{"duplicate key, pretty array", "[\n" + good + ",\n" + strings.ReplaceAll(twice, ",", ",\n") + "\n]", "f:6: task_type: bad record: the key is given twice"},
		{"duplicate key in an episode's turn", `{"episode_id":"ep","turns":[` + good + "," + twice + "]}\n", "f:1: turns[1].task_type: bad record: the key is given twice"},
		{"invalid UTF-8, jsonl", good + "\n" + badUTF8 + "\n", "f:2: vlm_response: bad record: invalid UTF-8"},
		{"invalid UTF-8, array", "[\n" + good + ",\n" + badUTF8 + "\n]", "f:3: vlm_response: bad record: invalid UTF-8"},
		{"invalid UTF-8 in a key", good + "\n" + strings.Replace(good, `"model"`, "\"mo\xffdel\"", 1) + "\n" + strings.Replace(good, `{"sample_id"`, "{\"x\xff\":1,\"sample_id\"", 1), "f:3: bad record: invalid UTF-8"},
		{"a record cut short on line 3", good + "\n" + good + "\n" + good[:50] + "\n" + good + "\n", "f:3: bad record: not valid JSON"},
		{"a raw line break in a string on line 3", good + "\n" + good + "\n" + strings.Replace(good, `"u"`, "\"u\n", 1) + "\n", "f:3: bad record: not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll("f", tc.src)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant  %s", err, tc.want)
			}
		})
	}
	// Valid text in every script stays valid; escaped duplicates are duplicates too.
	if _, err := readAll("f", strings.Replace(good, `"u"`, `"天空是绿色的 🌈"`, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := readAll("f", strings.Replace(good, `"task_type":"t"`, `"task_type":"t","task_\u0074ype":"u"`, 1)); err == nil {
		t.Error("an escaped duplicate key passed")
	}
}
