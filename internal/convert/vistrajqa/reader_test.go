package vistrajqa

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// small is a valid trajectory with two sessions (probe after step 2) to break in one place.
const small = `{"session_id":"t-1","step_plan":[
 {"step_num":1,"observation":"o1","image_caption":"c1","action":"a1"},
 {"step_num":2,"observation":"o2","action":"a2"},
 {"step_num":3,"observation":"o3","image_caption":"c3","action":"a3"}],
 "probes":[{"after_step":2,"questions":[{"question":"q","answer":"a","type":"FR","evidence":["mp_S00_1","S00_img_1"]}]}],
 "post_trajectory_qa":[{"question":"q2","answer":"a2","type":"VS","evidence":["S01_img_1"]}],
 "memory_points":[
  {"mp_id":"mp_S00_1","content":"c","type":"event_memory","source":"primary","step_num":1,"is_update":false,"importance":0.4},
  {"mp_id":"mp_S01_1","content":"d","type":"state_memory","source":"secondary","step_num":3,"is_update":true,"original_memories":["x"],"importance":1.0}]}`

// edit decodes small, changes it and encodes it as one line.
func edit(t *testing.T, f func(m map[string]any)) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(small), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func at(m map[string]any, key string, i int) map[string]any {
	return m[key].([]any)[i].(map[string]any)
}

func TestReaderErrors(t *testing.T) {
	cases := []struct {
		name string
		line func(t *testing.T) string
		want string
	}{
		{"missing step_num", func(t *testing.T) string {
			return edit(t, func(m map[string]any) { delete(at(m, "step_plan", 2), "step_num") })
		}, "sessions-1.jsonl:2: step_plan[2].step_num: missing"},
		{"step_num of the wrong type", func(t *testing.T) string {
			return edit(t, func(m map[string]any) { at(m, "step_plan", 1)["step_num"] = "2" })
		}, "sessions-1.jsonl:2: step_plan[1].step_num: got string, want integer"},
		{"missing session_id", func(t *testing.T) string {
			return edit(t, func(m map[string]any) { delete(m, "session_id") })
		}, "sessions-1.jsonl:2: session_id: missing"},
		{"invalid JSON", func(*testing.T) string { return `{"session_id": "x",` }, "sessions-1.jsonl:2: invalid JSON"},
		{"not an object", func(*testing.T) string { return `["x"]` }, "sessions-1.jsonl:2: not a JSON object"},
		{"empty step_plan", func(t *testing.T) string {
			return edit(t, func(m map[string]any) { m["step_plan"] = []any{} })
		}, "step_plan: empty"},
		{"steps out of order", func(t *testing.T) string {
			return edit(t, func(m map[string]any) { at(m, "step_plan", 1)["step_num"] = 3 })
		}, "step_plan[1].step_num: 3, want 2: steps are numbered 1, 2, ... in order"},
		{"probe after the last step", func(t *testing.T) string {
			return edit(t, func(m map[string]any) { at(m, "probes", 0)["after_step"] = 4 })
		}, "probes[0].after_step: 4 is after the last step (3)"},
		{"probes not increasing", func(t *testing.T) string {
			return edit(t, func(m map[string]any) { m["probes"] = append(m["probes"].([]any), m["probes"].([]any)[0]) })
		}, "probes[1].after_step: 2 is not after the previous probe's step 2"},
		{"probe without questions", func(t *testing.T) string {
			return edit(t, func(m map[string]any) { at(m, "probes", 0)["questions"] = []any{} })
		}, "probes[0].questions: empty"},
		{"unknown QA type", func(t *testing.T) string {
			return edit(t, func(m map[string]any) { at(m, "post_trajectory_qa", 0)["type"] = "XR" })
		}, `post_trajectory_qa[0].type: "XR" is not one of FR, DU, MB, TR, KR, VFR, VS, VU, CMR`},
		{"unresolved memory evidence", func(t *testing.T) string {
			return edit(t, func(m map[string]any) { at(m, "post_trajectory_qa", 0)["evidence"] = []any{"mp_S09_1"} })
		}, `post_trajectory_qa[0].evidence[0]: "mp_S09_1" is neither an mp_id`},
		{"image evidence past the session's steps", func(t *testing.T) string {
			return edit(t, func(m map[string]any) { at(m, "post_trajectory_qa", 0)["evidence"] = []any{"S01_img_2"} })
		}, `post_trajectory_qa[0].evidence[0]: "S01_img_2" is neither`},
		{"duplicate mp_id", func(t *testing.T) string {
			return edit(t, func(m map[string]any) { at(m, "memory_points", 1)["mp_id"] = "mp_S00_1" })
		}, "memory_points[1].mp_id: duplicate: mp_S00_1"},
		{"mp_id names another session", func(t *testing.T) string {
			return edit(t, func(m map[string]any) { at(m, "memory_points", 1)["step_num"] = 2 })
		}, "memory_points[1].mp_id: mp_S01_1 names session S01 but step_num 2 falls in S00"},
		{"memory point after the last step", func(t *testing.T) string {
			return edit(t, func(m map[string]any) { at(m, "memory_points", 0)["step_num"] = 9 })
		}, "memory_points[0].step_num: 9 is after the last step (3)"},
		{"update without original memories", func(t *testing.T) string {
			return edit(t, func(m map[string]any) { delete(at(m, "memory_points", 1), "original_memories") })
		}, "memory_points[1].original_memories: missing or empty on an update"},
		{"importance off the scale", func(t *testing.T) string {
			return edit(t, func(m map[string]any) { at(m, "memory_points", 0)["importance"] = 0.5 })
		}, "memory_points[0].importance: 0.5 is not one of 0.4, 0.6, 0.8, 1.0"},
		{"unknown memory type", func(t *testing.T) string {
			return edit(t, func(m map[string]any) { at(m, "memory_points", 0)["type"] = "visual_memory" })
		}, `memory_points[0].type: "visual_memory" is not one of event_memory, state_memory, spatial_memory`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Line 1 is good, line 2 bad, line 3 good: the error names line 2 and the reader
			// goes on to line 3.
			good := edit(t, func(map[string]any) {})
			r := NewReader(strings.NewReader(good+"\n"+c.line(t)+"\n"+good+"\n"), "sessions-1.jsonl")
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
			_, err := r.Next()
			var re *RecordError
			if !errors.As(err, &re) {
				t.Fatalf("want a *RecordError, got %v", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("got  %s\nwant %s", err, c.want)
			}
			if tr, err := r.Next(); err != nil || tr.SessionID != "t-1" {
				t.Fatalf("after a bad record: %v, %v", tr, err)
			}
			if _, err := r.Next(); err != io.EOF {
				t.Fatalf("want io.EOF, got %v", err)
			}
		})
	}
}

func TestReaderLongLines(t *testing.T) {
	// A line far beyond bufio's default 64 KiB is fine.
	long := edit(t, func(m map[string]any) { at(m, "step_plan", 0)["observation"] = strings.Repeat("x", 1<<20) })
	r := NewReader(strings.NewReader(long+"\n"), "big.jsonl")
	tr, err := r.Next()
	if err != nil || len(tr.Steps[0].Observation) != 1<<20 {
		t.Fatalf("long line: %v", err)
	}
	// Past the bound it is an error that names the line, not unbounded memory.
	good := edit(t, func(map[string]any) {})
	r = NewReader(strings.NewReader(good+"\n"+long+"\n"), "big.jsonl")
	r.sc.Buffer(make([]byte, 0, 1024), 64<<10)
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err == nil {
		t.Fatal("want an error for the line over the bound")
	} else if !strings.Contains(err.Error(), "big.jsonl:2: line longer than") {
		t.Fatalf("got %v", err)
	}
}

func TestSessionsCut(t *testing.T) {
	cases := []struct {
		steps  int
		afters []int
		want   []Span
	}{
		{30, []int{6, 12, 18, 24}, []Span{{"S00", 1, 6}, {"S01", 7, 12}, {"S02", 13, 18}, {"S03", 19, 24}, {"S04", 25, 30}}},
		{3, nil, []Span{{"S00", 1, 3}}},
		{4, []int{2, 4}, []Span{{"S00", 1, 2}, {"S01", 3, 4}}},
		{1, []int{1}, []Span{{"S00", 1, 1}}},
	}
	for _, c := range cases {
		got := spans(c.steps, c.afters)
		if len(got) != len(c.want) {
			t.Fatalf("%d steps, probes %v: got %v, want %v", c.steps, c.afters, got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%d steps, probes %v: got %v, want %v", c.steps, c.afters, got, c.want)
			}
		}
	}
}

// TestReaderStrictJSON: what the schema cannot say but a researcher should hear about: a key
// given twice, a key in another case (Python's json.dumps never writes either), bad UTF-8.
func TestReaderStrictJSON(t *testing.T) {
	cases := []struct{ line, want string }{
		{`{"session_id":"a","session_id":"b","step_plan":[{"step_num":1,"observation":"","action":""}]}`, "x.jsonl:1: session_id: "},
		{`{"Session_ID":"a","step_plan":[{"step_num":1,"observation":"","action":""}]}`, "x.jsonl:1: session_id: missing"},
		{"{\"session_id\":\"\xff\",\"step_plan\":[{\"step_num\":1,\"observation\":\"\",\"action\":\"\"}]}", "x.jsonl:1: session_id: invalid JSON"},
		{`{"session_id":"a","step_plan":[{"step_num":1.0,"observation":"","action":""}]}`, "x.jsonl:1: step_plan[0].step_num: 1.0, want an integer"},
	}
	for _, c := range cases {
		_, err := NewReader(strings.NewReader(c.line+"\n"), "x.jsonl").Next()
		t.Log(err)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s:\n got  %v\n want %s...", c.line, err, c.want)
		}
	}
}
