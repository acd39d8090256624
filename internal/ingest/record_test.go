package ingest

import (
	"encoding/json"
	"reflect"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
)

// FuzzRecordDecoders holds unmarshalRecord's fast path to encoding/json's meaning: whatever the
// v2 decoder (in v1 mode, strict about UTF-8 and duplicate keys) accepts, encoding/json
// accepts too, with the same result.
func FuzzRecordDecoders(f *testing.F) {
	f.Add([]byte(`{"sample_id":"ep_turn_1","turn":2,"images":["a"],"meta":{"k":[1,2]},"human_annotation":{"correctness":3}}`))
	f.Add([]byte(`{"Sample_ID":"x","SAMPLE_ID":"y","turn":1.0}`))
	f.Add([]byte(`{"sample_id":"a","sample_id":"b","turns":[{}, null],"meta":null}`))
	f.Add([]byte("{\"user_message\":\"\xff\xfe\",\"model\":\"\\ud800\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast recordJSON
		if jsonv2.Unmarshal(data, &fast, recordOptions) != nil {
			return // unmarshalRecord falls back to encoding/json then
		}
		var std recordJSON
		if err := json.Unmarshal(data, &std); err != nil {
			t.Fatalf("v2 accepted what encoding/json rejects (%v): %q", err, data)
		}
		if !reflect.DeepEqual(fast, std) {
			t.Fatalf("decoders differ on %q:\n v2 %+v\n v1 %+v", data, fast, std)
		}
	})
}
