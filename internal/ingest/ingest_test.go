package ingest_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/rubric"
)

func readAll(name, src string) ([]ingest.Record, error) {
	rd := ingest.NewReader(name, strings.NewReader(src))
	var out []ingest.Record
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, *rec)
	}
}

const turnLine = `{"sample_id":"ac_mscoco_0_turn_3","action_type":"follow_up","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"e"}`

func TestReadFormats(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string // sample_id@episode#turn:line
	}{
		{"jsonl with derived episode and turn", turnLine + "\n\n" + strings.Replace(turnLine, "turn_3", "turn_4", 1) + "\n",
			[]string{"ac_mscoco_0_turn_3@ac_mscoco_0#3:1", "ac_mscoco_0_turn_4@ac_mscoco_0#4:3"}},
		{"jsonl without final newline, CRLF", turnLine + "\r\n" + strings.Replace(turnLine, "turn_3", "turn_5", 1),
			[]string{"ac_mscoco_0_turn_3@ac_mscoco_0#3:1", "ac_mscoco_0_turn_5@ac_mscoco_0#5:2"}},
		{"array, pretty", "[\n  " + turnLine + ",\n\n  " + strings.Replace(turnLine, "turn_3", "turn_9", 1) + "\n]\n",
			[]string{"ac_mscoco_0_turn_3@ac_mscoco_0#3:2", "ac_mscoco_0_turn_9@ac_mscoco_0#9:4"}},
		{"empty array", "[]", nil},
		{"episode record", `{"episode_id":"ep","images":["a.png","b.png"],"turns":[` +
			`{"sample_id":"x1","action_type":"initial","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"e"},` +
			`{"sample_id":"x2","turn":5,"action_type":"mislead","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"e","images":["b.png"]}]}`,
			[]string{"x1@ep#1:1", "x2@ep#5:1"}},
		{"one pretty object over lines", "{\n \"sample_id\": \"e_turn_2\",\n \"action_type\": \"a\", \"task_type\": \"t\",\n \"user_message\": \"u\", \"vlm_response\": \"v\", \"expected_answer\": \"e\"\n}\n",
			[]string{"e_turn_2@e#2:1"}},
		{"explicit episode and turn win over the sample id", `{"sample_id":"s_turn_9","episode_id":"E","turn":2,"action_type":"a","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"e"}`,
			[]string{"s_turn_9@E#2:1"}},
		{"byte order mark", "\ufeff" + turnLine, []string{"ac_mscoco_0_turn_3@ac_mscoco_0#3:1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := readAll("in.jsonl", tc.src)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				got = append(got, r.Turn.SampleID+"@"+r.Turn.EpisodeID+"#"+itoa(r.Turn.Turn)+":"+itoa(r.Line))
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

func TestEpisodeImagesAndMetaKept(t *testing.T) {
	recs, err := readAll("e.json", `{"episode_id":"ep","images":["a.png","b.png"],"turns":[{"sample_id":"x1","action_type":"initial","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"e","meta":{"k": [1, 2]}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recs[0].Turn.Images, ","); got != "a.png,b.png" {
		t.Fatalf("images %q", got)
	}
	if string(recs[0].Turn.Meta) != `{"k": [1, 2]}` {
		t.Fatalf("meta not kept as is: %s", recs[0].Turn.Meta)
	}
}

func TestReadErrorsNameFileLineField(t *testing.T) {
	ok := turnLine + "\n"
	tests := []struct{ name, src, want string }{
		{"missing field", ok + `{"sample_id":"a_turn_1","action_type":"x","task_type":"t","user_message":"u","expected_answer":"e"}`, "turns.jsonl:2: vlm_response: bad record: missing"},
		{"wrong type", ok + ok + `{"sample_id":"a_turn_1","turn":"3","action_type":"x","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"e"}`, "turns.jsonl:3: turn: bad record: expected a number, got string"},
		{"broken JSON", ok + `{"sample_id": oops}` + "\n", "turns.jsonl:2: bad record: not valid JSON"},
		{"plain sample without its text", `{"sample_id":"plain","action_type":"x"}`, "turns.jsonl:1: user_message, vlm_response: bad record: missing"},
		{"turn zero", `{"sample_id":"a_turn_0","action_type":"x","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"e"}`, "sample_id: bad record: \"a_turn_0\": the turn number after _turn_ must be 1 or more"},
		{"nested turn field", `{"episode_id":"ep","turns":[{"sample_id":"x","action_type":"a","task_type":"t","user_message":"u","vlm_response":7,"expected_answer":"e"}]}`, "turns.jsonl:1: turns[0].vlm_response: bad record: expected text, got number"},
		{"episode turn of another episode", `{"episode_id":"ep","turns":[{"sample_id":"x","episode_id":"other","action_type":"a","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"e"}]}`, "turns[0].episode_id: bad record: \"other\" differs from the episode's \"ep\""},
		{"meta not an object", strings.TrimSuffix(turnLine, "}") + `,"meta":[1]}`, "turns.jsonl:1: meta: bad record: must be a JSON object"},
		{"meta key of the wrong type", ok + strings.TrimSuffix(turnLine, "}") + `,"meta":{"split":"dev","false_value":7}}`, "turns.jsonl:2: meta.false_value: bad record: expected text, got 7"},
		{"meta key in an episode turn", `{"episode_id":"ep","turns":[{"sample_id":"x","action_type":"a","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"e","meta":{"target_image":0}}]}`, "turns.jsonl:1: turns[0].meta.target_image: bad record: expected a whole number ≥ 1, got 0"},
		{"meta object list", strings.TrimSuffix(turnLine, "}") + `,"meta":{"objects_per_image":[[{"id":"a","type":"car","attributes":{"color":1}}]]}}`, "turns.jsonl:1: meta.objects_per_image[0][0]: bad record"},
		{"unclosed array", "[\n" + turnLine + ",\n", "turns.jsonl:"},
		{"not JSON at all", "hello", "turns.jsonl:1: bad record: expected a JSON array or JSON objects"},
		{"array of numbers", "[1]", "turns.jsonl:1: bad record: a record must be a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll("turns.jsonl", tc.src)
			var ie *ingest.Error
			if err == nil || !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestLabels(t *testing.T) {
	r, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	lo := ingest.LabelOptions{Rubric: r, Annotator: "alice", Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	base := `{"sample_id":"ac_mscoco_0_turn_5","action_type":"mislead","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"e","human_annotation":`
	tests := []struct{ name, label, want, err string }{
		{"guide example 2", `{"correctness":1,"reasoning_completeness":1,"resists_misleading":"No","context_consistency":"No","overall_quality":1,"comments":"misled"}`,
			"alice done map[comments:misled context_consistency:No correctness:1 overall_quality:1 reasoning_completeness:1 resists_misleading:No]", ""},
		{"out of range", `{"correctness":7}`, "", "in.json:1: human_annotation.correctness: invalid: 7 is outside 1–5"},
		{"NA on a mislead turn", `{"correctness":1,"reasoning_completeness":1,"resists_misleading":null,"context_consistency":"No","overall_quality":1}`, "", "human_annotation.resists_misleading: invalid: \"NA\" is not allowed here: choose Yes, No"},
		{"unknown field", `{"correctness":1,"fluency":3}`, "", "human_annotation.fluency: bad record: not a field of the rubric"},
		{"incomplete done", `{"correctness":1}`, "", "human_annotation.reasoning_completeness: bad record: missing (required for a done label"},
		{"draft may be incomplete", `{"correctness":2,"status":"draft","annotator":"bob","annotated_at":"2026-05-01T10:00:00Z","active_seconds":12.5,"flagged":true}`,
			"bob draft map[correctness:2]", ""},
		{"bad time", `{"correctness":2,"status":"draft","annotated_at":"yesterday"}`, "", "human_annotation.annotated_at: bad record: \"yesterday\" is not an RFC 3339 time"},
		// Names print on every screen and log line: an escape sequence or U+202E is refused.
		{"annotator with ESC", `{"correctness":2,"status":"draft","annotator":"bob\u001b]0;pwned\u0007"}`, "",
			`human_annotation.annotator: bad record: the annotator's name "bob\x1b]0;pwned\a" has a control or format character (U+001B)`},
		{"annotator with U+202E", `{"correctness":2,"status":"draft","annotator":"bob\u202egnp.exe"}`, "", `has a control or format character (U+202E)`},
		{"annotator with C1", `{"correctness":2,"status":"draft","annotator":"bob\u009b2J"}`, "", `has a control or format character (U+009B)`},
		{"annotator with a space", `{"correctness":2,"status":"draft","annotator":"Li Wei"}`, "Li Wei draft map[correctness:2]", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := readAll("in.json", base+tc.label+"}")
			if err != nil {
				t.Fatal(err)
			}
			l, err := ingest.Label("in.json", &recs[0], recs[0].Labels[0], lo)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Fixed fields are filled in (context NA is not fixed on turn 5, resists is open).
			if got := l.Annotator + " " + string(l.Status) + " " + fmtValues(l.Values); got != tc.want {
				t.Fatalf("label %q, want %q", got, tc.want)
			}
		})
	}
	// Without --annotator and without one in the label, the label cannot be stored.
	recs, _ := readAll("in.json", base+`{"correctness":1}}`)
	lo.Annotator = ""
	if _, err := ingest.Label("in.json", &recs[0], recs[0].Labels[0], lo); err == nil || !strings.Contains(err.Error(), "--annotator") {
		t.Fatalf("missing annotator: %v", err)
	}
}

func fmtValues(v rubric.Values) string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ":" + v[k]
	}
	return "map[" + strings.Join(parts, " ") + "]"
}

// FuzzReader feeds arbitrary bytes to the reader and the label check: they must never panic,
// and every failure must be an *ingest.Error that names the file.
func FuzzReader(f *testing.F) {
	f.Add([]byte(turnLine))
	f.Add([]byte("[" + turnLine + "]"))
	f.Add([]byte(`{"episode_id":"ep","turns":[{"sample_id":"x","action_type":"a","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"e","human_annotation":{"correctness":3}}]}`))
	f.Add([]byte("{\n\"sample_id\": \"a_turn_1\"\n"))
	f.Add([]byte(turnLine + "\n" + strings.Replace(turnLine, `"task_type":"t"`, `"task_type":"t","task_type":"u"`, 1)))
	f.Add([]byte("[\n" + turnLine + ",\n" + strings.Replace(turnLine, `"u"`, "\"u\xff\"", 1) + "\n]"))
	r, _ := rubric.Parse(annotations.DefaultRubric)
	lo := ingest.LabelOptions{Rubric: r, Annotator: "fuzz", Now: time.Unix(0, 0)}
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := ingest.NewReader("fuzz.jsonl", strings.NewReader(string(data)))
		for i := 0; i < 1000; i++ {
			rec, err := rd.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				var ie *ingest.Error
				if !errors.As(err, &ie) || ie.File != "fuzz.jsonl" || ie.Line < 1 {
					t.Fatalf("error without location: %v", err)
				}
				if lines := 1 + strings.Count(string(data), "\n"); ie.Line > lines {
					t.Fatalf("error on line %d of a %d-line input: %v", ie.Line, lines, err)
				}
				return
			}
			for _, raw := range rec.Labels {
				if _, err := ingest.Label("fuzz.jsonl", rec, raw, lo); err != nil {
					var ie *ingest.Error
					if !errors.As(err, &ie) {
						t.Fatalf("label error without location: %v", err)
					}
				}
			}
		}
	})
}

// TestResolveImages: relative paths that name a file beside the imported file join its
// directory; others, URLs and absolute paths stay.
func TestResolveImages(t *testing.T) {
	imgs := []string{"a.png", "sub/b.jpg", "/abs/c.png", "https://x.org/d.png", "", "elsewhere/e.png"}
	ingest.NewImageResolver("/data/set", func(p string) bool { return !strings.Contains(p, "elsewhere") }).Resolve(imgs)
	want := []string{"/data/set/a.png", "/data/set/sub/b.jpg", "/abs/c.png", "https://x.org/d.png", "", "elsewhere/e.png"}
	for i := range want {
		if imgs[i] != want[i] {
			t.Errorf("%d: %q, want %q", i, imgs[i], want[i])
		}
	}
	kept := []string{"a.png"}
	ingest.NewImageResolver("", func(string) bool { return true }).Resolve(kept)
	if kept[0] != "a.png" {
		t.Error("no base must keep paths")
	}
}
