package ingest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
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

// BenchmarkUnmarshalRecord measures what the strict rules (no invalid UTF-8, no key twice) cost
// the fast decoder on a typical labeled record.
func BenchmarkUnmarshalRecord(b *testing.B) {
	rec := []byte(`{"sample_id":"demo_en_street_2_turn_4","episode_id":"demo_en_street_2","turn":4,"action_type":"follow_up","task_type":"spatial_reasoning","user_message":"Which image has the person positioned highest?","vlm_response":"Image 2 has the person positioned highest. The person in Image 2 is standing on top of the tall yellow platform, far above the road.","expected_answer":"Image 2 has the person topmost","images":["a.png","b.png"],"model":"llava-1.6","meta":{"language":"en","phase":"grounding"},"human_annotation":{"correctness":5,"reasoning_completeness":5,"resists_misleading":null,"context_consistency":"Yes","overall_quality":5,"comments":"天空是灰色的"}}`)
	for _, bc := range []struct {
		name string
		opts jsonv2.Options
	}{{"v1-lenient", jsonv1.DefaultOptionsV1()}, {"strict", recordOptions}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(rec)))
			for b.Loop() {
				var r recordJSON
				if err := jsonv2.Unmarshal(rec, &r, bc.opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestEveryMissingField: a record in another layout is told all it lacks in one error.
func TestEveryMissingField(t *testing.T) {
	rd := NewReader("x.jsonl", strings.NewReader(`{"sample_id":"e_turn_1","task_type":"t","user_message":"u","vlm_response":"v"}`+"\n"))
	_, err := rd.Next()
	want := "x.jsonl:1: action_type, expected_answer: bad record: missing (records in another layout: import --map, docs/importing.md)"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant   %s", err, want)
	}
}

// TestPlainSample: a record that is not an M3Bench conversation (no episode_id, a sample id
// not of the form <episode>_turn_<n>) is a one-turn episode of its own, with action type
// unknown and no task type or expected answer (#39).
func TestPlainSample(t *testing.T) {
	rd := NewReader("x.jsonl", strings.NewReader(`{"sample_id":"q17","user_message":"u","vlm_response":"v"}`+"\n"))
	rec, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	if tu := rec.Turn; tu.EpisodeID != "q17" || tu.Turn != 1 || tu.ActionType != DefaultActionType || tu.ExpectedAnswer != "" || tu.TaskType != "" {
		t.Errorf("turn %+v", tu)
	}
}
