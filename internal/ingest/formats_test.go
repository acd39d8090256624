package ingest

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/xuri/excelize/v2"
)

const logs = "testdata/logs/"

// readAll reads every record of a file in the given format (detected when empty).
func readAll(t *testing.T, path string, format Format, media *Media, maps ...string) []Record {
	t.Helper()
	recs, err := tryReadAll(path, format, media, maps...)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func tryReadAll(path string, format Format, media *Media, maps ...string) ([]Record, error) {
	var paths []FieldPath
	if len(maps) > 0 {
		var err error
		if paths, err = ParseFieldPaths(maps); err != nil {
			return nil, err
		}
		if format == "" {
			format = FormatMap // else --map with --from: the maps add to the format's turns
		}
	}
	if format == "" {
		f, _, err := Detect(path)
		if err != nil {
			return nil, err
		}
		format = f
	}
	src, closer, err := Open(path, Options{Format: format, Map: paths, Media: media})
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

func source(t *testing.T, r Record) map[string]any {
	t.Helper()
	var m struct {
		Source map[string]any `json:"source"`
	}
	if err := json.Unmarshal(r.Turn.Meta, &m); err != nil || m.Source == nil {
		t.Fatalf("%s: meta %s has no source object: %v", r.Turn.SampleID, r.Turn.Meta, err)
	}
	return m.Source
}

func TestDetectEachFormat(t *testing.T) {
	for path, want := range map[string]Format{
		logs + "openai/chat_log.jsonl":        FormatOpenAI,
		logs + "sharegpt/llava_instruct.json": FormatShareGPT,
		logs + "lmms-eval/qwen2_vl_7b/20250612_101500_samples_unig2u_illusionbench_arshia_icon_shape_test.jsonl": FormatLMMSEval,
		logs + "vlmevalkit/Qwen2-VL-7B-Instruct/Qwen2-VL-7B-Instruct_MMDU.xlsx":                                  FormatVLMEvalKit,
		logs + "vlmevalkit/Qwen2-VL-7B-Instruct/Qwen2-VL-7B-Instruct_MMDU.json":                                  FormatVLMEvalKit,
		logs + "vlmevalkit/Qwen2-VL-7B-Instruct/Qwen2-VL-7B-Instruct_MMBench_DEV_EN.tsv":                         FormatVLMEvalKit,
		"testdata/turns.jsonl": FormatM3eval,
	} {
		if _, err := os.Stat(path); err != nil {
			continue // the native sample is named differently in some trees
		}
		got, why, err := Detect(path)
		if err != nil || got != want || why == "" {
			t.Errorf("%s: detected %q (%s), %v; want %s", path, got, why, err, want)
		}
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "x.jsonl")
	os.WriteFile(p, []byte(`{"question": "q", "response": {"text": "a"}}`+"\n"), 0o644)
	if _, _, err := Detect(p); err == nil || !strings.Contains(err.Error(), "question, response") || !strings.Contains(err.Error(), "--map") {
		t.Errorf("undetectable file: %v", err)
	}
}

func TestOpenAIChatLog(t *testing.T) {
	media := &Media{Dir: filepath.Join(t.TempDir(), "media")}
	recs := readAll(t, logs+"openai/chat_log.jsonl", "", media)
	if len(recs) != 3 {
		t.Fatalf("%d turns, want 3", len(recs))
	}
	a, b, c := recs[0].Turn, recs[1].Turn, recs[2].Turn
	if a.SampleID != "chatcmpl-log-0001_turn_1" || a.EpisodeID != "chatcmpl-log-0001" || a.Turn != 1 || b.Turn != 2 ||
		a.UserMessage != "What colour is the umbrella?" || a.VLMResponse != "The umbrella is yellow." ||
		b.UserMessage != "I think it is red, isn't it?" || a.ActionType != DefaultActionType || a.ExpectedAnswer != "" ||
		a.Model != "gpt-4o-2024-08-06" || recs[1].Line != 1 || recs[2].Line != 2 {
		t.Fatalf("turns %+v\n%+v", a, b)
	}
	// The data URL became a file in the media folder, shown with both turns.
	if len(a.Images) != 1 || len(b.Images) != 1 || a.Images[0] != b.Images[0] || filepath.Dir(a.Images[0]) != media.Dir {
		t.Fatalf("images %v %v", a.Images, b.Images)
	}
	png, err := os.ReadFile(a.Images[0])
	if err != nil || !strings.HasPrefix(string(png), "\x89PNG") || media.Written() != 1 {
		t.Fatalf("image file: %v, %d written", err, media.Written())
	}
	src := source(t, recs[0])
	if src["system"] != "You are a careful visual assistant." || src["format"] != "openai" || src["metadata"].(map[string]any)["harness"] != "m3bench-runner" {
		t.Errorf("meta.source %v", src)
	}
	// A request/response pair: the response's first choice answers; the request's model.
	if c.VLMResponse != "A wet street at dusk with two cyclists." || c.Model != "gpt-4o-mini" || c.EpisodeID != "chat_log-L2" ||
		len(c.Images) != 1 || c.Images[0] != "images/street.jpg" {
		t.Fatalf("request/response turn %+v", c)
	}
	if src := source(t, recs[2]); src["request.temperature"] != float64(0) {
		t.Errorf("request fields not kept: %v", src)
	}
}

func TestShareGPT(t *testing.T) {
	recs := readAll(t, logs+"sharegpt/llava_instruct.json", "", nil)
	if len(recs) != 3 {
		t.Fatalf("%d turns", len(recs))
	}
	a, c := recs[0].Turn, recs[2].Turn
	if a.SampleID != "000000215677_turn_1" || a.UserMessage != "What is the cat doing?" || a.Images[0] != "coco/train2017/000000215677.jpg" ||
		recs[1].Turn.Turn != 2 || recs[1].Turn.UserMessage != "Is that a safe place for it?" {
		t.Fatalf("turns %+v %+v", a, recs[1].Turn)
	}
	if c.UserMessage != "Which map shows Oceania?\nA. left\nB. right" || len(c.Images) != 2 || c.Model != "llava-v1.5-13b" || c.VLMResponse != "B" {
		t.Fatalf("turn %+v", c)
	}
	src := source(t, recs[2])
	if src["system"] != "Answer with the option's letter." || src["image_placeholders"] != float64(2) {
		t.Errorf("meta.source %v", src)
	}
	// The JSON array spans many lines: each conversation starts where LLaVA's dump put it.
	if recs[0].Line != 2 || recs[2].Line <= recs[0].Line {
		t.Errorf("lines %d, %d", recs[0].Line, recs[2].Line)
	}
}

func TestVLMEvalKit(t *testing.T) {
	dir := logs + "vlmevalkit/Qwen2-VL-7B-Instruct/"
	x := readAll(t, dir+"Qwen2-VL-7B-Instruct_MMDU.xlsx", "", nil)
	j := readAll(t, dir+"Qwen2-VL-7B-Instruct_MMDU.json", "", nil)
	if len(x) != 5 || len(j) != 5 {
		t.Fatalf("%d and %d turns, want 5", len(x), len(j))
	}
	// The xlsx (lists as Python literals) and the json (lists as lists) give the same turns.
	for i := range x {
		if x[i].Turn.Hash() == nil || string(x[i].Turn.Hash()) != string(j[i].Turn.Hash()) {
			t.Errorf("turn %d: xlsx %+v\njson %+v", i, x[i].Turn, j[i].Turn)
		}
	}
	a, b := x[0].Turn, x[1].Turn
	if a.SampleID != "Qwen2-VL-7B-Instruct/MMDU/0_turn_1" || a.UserMessage != "What do the two pictures have in common?" ||
		a.VLMResponse != "Both pictures show a bridge crossing a river." || a.ExpectedAnswer != "Both show the same stone bridge over a river." ||
		a.Model != "Qwen2-VL-7B-Instruct" || len(a.Images) != 2 || a.Images[1] != "0_1.jpg" || !x[0].Row || x[0].Line != 2 {
		t.Fatalf("turn %+v (row %v %d)", a, x[0].Row, x[0].Line)
	}
	if b.VLMResponse != "The second one, because it's dark and the 'lamps' are on.\nThe first is daytime." || b.Turn != 2 {
		t.Fatalf("turn 2 %q", b.VLMResponse)
	}
	if x[4].Turn.UserMessage != "他们可能在庆祝什么？" || x[4].Turn.Turn != 3 {
		t.Fatalf("turn %+v", x[4].Turn)
	}
	if src := source(t, x[0]); src["image_placeholders"] != float64(2) || src["dataset"] != "MMDU" {
		t.Errorf("meta.source %v", src)
	}
	s := readAll(t, dir+"Qwen2-VL-7B-Instruct_MMBench_DEV_EN.tsv", "", nil)
	if len(s) != 2 {
		t.Fatalf("%d turns", len(s))
	}
	q := s[1].Turn
	want := "Hint: The photo was taken in a park.\nQuestion: What is the man holding?\tAnswer with the option's letter.\nOptions:\nA. an umbrella\nB. a kite\nC. a dog leash\nD. a \"frisbee\"\nPlease select the correct answer from the options above."
	if q.UserMessage != want || q.VLMResponse != "A. an umbrella" || q.ExpectedAnswer != "C" || q.SampleID != "Qwen2-VL-7B-Instruct/MMBench_DEV_EN/11_turn_1" || s[1].Line != 3 {
		t.Fatalf("tsv turn %q line %d\n%+v", q.UserMessage, s[1].Line, q)
	}
	if src := source(t, s[1]); src["category"] != "object localization" {
		t.Errorf("meta.source %v", src)
	}
}

func TestLMMSEval(t *testing.T) {
	media := &Media{Dir: filepath.Join(t.TempDir(), "m")}
	recs := readAll(t, logs+"lmms-eval/qwen2_vl_7b/20250612_101500_samples_unig2u_illusionbench_arshia_icon_shape_test.jsonl", "", media)
	if len(recs) != 3 {
		t.Fatalf("%d turns", len(recs))
	}
	a := recs[1].Turn
	if a.SampleID != "qwen2_vl_7b/unig2u_illusionbench_arshia_icon_shape_test/1_turn_1" || a.VLMResponse != "Stationery" ||
		!strings.HasPrefix(a.UserMessage, "This image contains a icon") || a.Model != "qwen2_vl_7b" || len(a.Images) != 1 ||
		filepath.Dir(a.Images[0]) != media.Dir {
		t.Fatalf("turn %+v", a)
	}
	src := source(t, recs[1])
	if src["shape_recall"] != float64(0) || src["doc_id"] != float64(1) || src["task"] != "unig2u_illusionbench_arshia_icon_shape_test" {
		t.Errorf("meta.source %v", src)
	}
	if n, _ := src["input_media_names"].([]any); len(n) != 1 || n[0] != "Stationary-12-Sand_dune-Hard-1.1-64.png" {
		t.Errorf("input_media_names %v", src["input_media_names"])
	}
	// The older layouts: a JSON array of samples (before 0.1) and {"logs": [...]}.
	dir := t.TempDir()
	arr := filepath.Join(dir, "samples_mme.jsonl")
	os.WriteFile(arr, []byte("[\n"+`{"doc_id": 0, "target": "Yes", "arguments": [["Is there a cat?", {"until": []}]], "resps": [["Yes"]], "filtered_resps": ["Yes"], "doc": {"question_id": "q0"}}`+",\n"+
		`{"doc_id": 1, "target": ["No"], "arguments": {"gen_args_0": {"arg_0": "Is it red?"}}, "resps": [["No"]]}`+"\n]\n"), 0o644)
	recs = readAll(t, arr, FormatLMMSEval, nil)
	if len(recs) != 2 || recs[0].Turn.UserMessage != "Is there a cat?" || recs[0].Turn.ExpectedAnswer != "Yes" ||
		recs[1].Turn.UserMessage != "Is it red?" || recs[1].Turn.ExpectedAnswer != `["No"]` || recs[1].Line != 3 {
		t.Fatalf("array layout %+v", recs)
	}
	old := filepath.Join(dir, "model_mme.json")
	os.WriteFile(old, []byte(`{"args": {}, "logs": [{"doc_id": 0, "resps": [["a"]]}, {"doc_id": 1, "resps": [["b"]]}]}`), 0o644)
	if recs = readAll(t, old, "", nil); len(recs) != 2 || recs[1].Turn.VLMResponse != "b" {
		t.Fatalf("logs layout %+v", recs)
	}
}

func TestMap(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "lab.jsonl")
	os.WriteFile(p, []byte(`{"conv": "c1", "question": "Q1", "response": {"text": "A1"}, "meta": {"model": "m"}, "shots": [{"img": "a.png"}], "score": 0.5}`+"\n"+
		`{"conv": "c1", "question": "Q2", "response": {"text": "A2"}, "meta": {"model": "m"}, "shots": [{"img": "a.png"}]}`+"\n"+
		`{"conv": "c2", "question": "Q3", "response": {"text": 7}, "meta": {"model": "m"}}`+"\n"), 0o644)
	maps := []string{"episode_id=conv", "user_message=question", "vlm_response=response.text", "model=meta.model", "images=shots[0].img"}
	recs, err := tryReadAll(p, "", nil, maps...)
	if len(recs) != 3 || err != nil {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	if r := recs[1].Turn; r.SampleID != "c1_turn_2" || r.UserMessage != "Q2" || r.VLMResponse != "A2" || r.Model != "m" || r.Images[0] != "a.png" {
		t.Fatalf("turn %+v", r)
	}
	if src := source(t, recs[0]); src["score"] != 0.5 || src["shots"] == nil || src["question"] != nil {
		t.Errorf("meta.source %v", src)
	}
	if recs[2].Turn.VLMResponse != "7" || recs[2].Turn.Turn != 1 {
		t.Errorf("turn %+v", recs[2].Turn)
	}
	os.WriteFile(p, []byte(`{"question": "Q1", "response": {"text": "A1"}}`+"\n"+`{"question": "Q2", "response": {}}`+"\n"), 0o644)
	if _, err := tryReadAll(p, "", nil, maps[1:3]...); err == nil || !strings.Contains(err.Error(), p+":2: response.text (mapped to vlm_response): bad record: missing") {
		t.Errorf("error %v", err)
	}
	for _, bad := range [][]string{{"colour=q", "user_message=q", "vlm_response=r"}, {"user_message=q[x]", "vlm_response=r"}} {
		if _, err := ParseFieldPaths(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// Alone (no --from), maps must make whole turns.
	if paths, err := ParseFieldPaths([]string{"user_message=q"}); err != nil || CheckTurnMap(paths) == nil {
		t.Errorf("user_message alone: %v", err)
	}
}

// TestErrorsNameFileLineAndField: every converter's error gives the place.
func TestErrorsNameFileLineAndField(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, content string
		format        Format
		want          string
	}{
		{"a.jsonl", `{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}` + "\n" + `{"messages": [{"role": "robot", "content": "x"}]}`, FormatOpenAI, ":2: messages[0].role: bad record: \"robot\""},
		{"b.jsonl", `{"messages": [{"role": "user", "content": [{"type": "audio"}]}]}`, FormatOpenAI, ":1: messages[0].content[0].type"},
		{"c.jsonl", `{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,@@@"}}]}]}`, FormatOpenAI, ":1: messages[0].content[0].image_url: bad record: a data URL with bad base64"},
		{"d.jsonl", `{"model": "x"}`, FormatOpenAI, ":1: messages: bad record: missing"},
		{"e.jsonl", `{"messages": "hello"}`, FormatOpenAI, ":1: messages: bad record: not a list"},
		{"f.json", "[\n" + `{"conversations": [{"from": "human", "value": "q"}]},` + "\n" + `{"conversations": [{"from": "gpt"}]}` + "\n]", FormatShareGPT, ":3: conversations[0].value: bad record: missing"},
		{"g.jsonl", `{"doc_id": -1, "resps": []}`, FormatLMMSEval, ":1: doc_id: bad record: not a non-negative integer"},
		{"h.jsonl", `{"doc_id": 1, "resps": [[3]]}`, FormatLMMSEval, ":1: resps: bad record: no string in"},
		{"m_MMDU.tsv", "\"index\"\t\"question\"\t\"prediction\"\n\"0\"\t\"['a', 'b']\"\t\"['x']\"\n", FormatVLMEvalKit, ":2: prediction: bad record: 1 answers for 2 questions"},
		{"n_X.tsv", "\"index\"\t\"question\"\n\"0\"\t\"q\"\n", FormatVLMEvalKit, ":2: prediction: bad record: missing"},
		{"o_X.tsv", "\"index\"\t\"question\"\t\"prediction\"\n\"0\"\t\"['a', __import__('os')]\"\t\"['x', 'y']\"\n", FormatVLMEvalKit, ":2: question: bad record: Python literal"},
		{"p.jsonl", `{"messages": [{"role": "user", "content": "a"}]` + "\n", FormatOpenAI, ":1: bad record: the file ends inside a record"},
	}
	for _, c := range cases {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := tryReadAll(p, c.format, &Media{Dir: filepath.Join(dir, "media")})
		if err == nil || !strings.Contains(err.Error(), p+c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		var ie *Error
		if err != nil && !errors.As(err, &ie) {
			t.Errorf("%s: %T is not an ingest.Error", c.name, err)
		}
	}
	// xlsx: the row, as the spreadsheet numbers it.
	p := filepath.Join(dir, "m_MMDU.xlsx")
	f := excelize.NewFile()
	rows := [][]any{{"index", "question", "prediction"}, {0, "['a']", "['x']"}, {1, "['a', 'b']", "['x']"}}
	for i, r := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow("Sheet1", cell, &r); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.SaveAs(p); err != nil {
		t.Fatal(err)
	}
	recs, err := tryReadAll(p, FormatVLMEvalKit, nil)
	if len(recs) != 1 || err == nil || !strings.Contains(err.Error(), p+": row 3: prediction: bad record: 1 answers for 2 questions") {
		t.Errorf("xlsx: %d records, error %v", len(recs), err)
	}
}

func TestPyLiteral(t *testing.T) {
	good := map[string][]string{
		`['a', "b"]`:                                     {"a", "b"},
		`["it's", 'say "hi"', '\'q\'']`:                  {"it's", `say "hi"`, "'q'"},
		`['line\nbreak\ttab\\', '\x41\u00e9\U0001F600']`: {"line\nbreak\ttab\\", "Aé😀"},
		`('tuple', None)`:                                {"tuple", ""},
		`[r'\d+', u'中文', '''tri'ple''']`:                 {`\d+`, "中文", "tri'ple"},
		"[\n  'a',\n  'b',\n]":                           {"a", "b"},
		`[]`:                                             {},
	}
	for in, want := range good {
		got, err := PyStringList(in)
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("%s: %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{`['a'`, `['a' 'b']`, `__import__('os').system('id')`, `[open('/etc/passwd')]`, `['a'] + ['b']`,
		`[lambda: 1]`, `{'a': 1}`, `'just a string'`, `[True, 'a']`, strings.Repeat("[", 100) + strings.Repeat("]", 100), `['\x4']`} {
		if v, err := PyStringList(in); err == nil {
			t.Errorf("%s: accepted as %q", in, v)
		}
	}
	if v, err := ParsePyLiteral(`[1, -2.5, True, False, None, [0x1F]]`); err != nil || len(v.([]any)) != 6 {
		t.Errorf("numbers and keywords: %v %v", v, err)
	}
}

func TestMediaWritesOnce(t *testing.T) {
	m := &Media{Dir: filepath.Join(t.TempDir(), "x", "media")}
	const url = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	a, err := m.Ref(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Ref(url)
	if a != b || m.Written() != 1 || filepath.Ext(a) != ".png" {
		t.Fatalf("%s %s, %d written", a, b, m.Written())
	}
	if p, _ := m.Ref("http://x/y.png"); p != "http://x/y.png" {
		t.Errorf("a URL changed: %s", p)
	}
	if _, err := (*Media)(nil).Ref(url); !errors.Is(err, ErrNoMediaDir) {
		t.Errorf("no dir: %v", err)
	}
	st, err := os.Stat(a)
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v", st.Mode(), err)
	}
}

// TestConvertedObjectsAcrossLines: pretty-printed objects one after another (not JSON Lines)
// are read with the line each starts on.
func TestConvertedObjectsAcrossLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pretty.jsonl")
	os.WriteFile(p, []byte("{\n  \"id\": \"a\",\n  \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assistant\", \"content\": \"yo\"}]\n}\n"+
		"{\n  \"id\": \"b\",\n  \"messages\": [{\"role\": \"user\", \"content\": \"hey\"}, {\"role\": \"robot\", \"content\": \"x\"}]\n}\n"), 0o644)
	recs, err := tryReadAll(p, FormatOpenAI, nil)
	if len(recs) != 1 || recs[0].Turn.VLMResponse != "yo" || recs[0].Line != 1 {
		t.Fatalf("records %+v", recs)
	}
	if err == nil || !strings.Contains(err.Error(), p+":5: messages[1].role") {
		t.Fatalf("error %v", err)
	}
}

// FuzzPyLiteral: any text parses or fails, never panics or runs away.
func FuzzPyLiteral(f *testing.F) {
	for _, s := range []string{`['a', "b"]`, `('x', None, 1.5e3, [True])`, `['\x41\u00e9\N{DASH}']`, `r'''a'''`, `[[[[`, `'\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParsePyLiteral(s)
		if err == nil && v == nil && !strings.Contains(s, "None") {
			t.Fatalf("%q parsed to nil", s)
		}
	})
}

// TestMapLabels: --map fills a label (label.FIELD, annotator) as well as the turn; a mapped
// sample id is its own one-turn episode, a number its text; every missing mapped field of a
// record is named in one error.
func TestMapLabels(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "rater.jsonl")
	os.WriteFile(p, []byte(`{"score_id": 13, "q": "Q", "a": "A", "who": "ann", "human_answer": "4", "extra": 1}`+"\n"+
		`{"score_id": 14, "q": "Q2", "a": "A2", "who": "bob", "human_answer": 2}`+"\n"), 0o644)
	maps := []string{"sample_id=score_id", "user_message=q", "vlm_response=a", "annotator=who", "label.overall_quality=human_answer"}
	recs, err := tryReadAll(p, "", nil, maps...)
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	tu := recs[0].Turn
	if tu.SampleID != "13" || tu.EpisodeID != "13" || tu.Turn != 1 || tu.ActionType != DefaultActionType || !tu.Omitted.Meta {
		t.Errorf("turn %+v", tu)
	}
	// Neither images nor model mapped: the stored turn keeps its own (a rater's file
	// without the picture is not a conflict with the fuller file imported before).
	if !tu.Omitted.Images || !tu.Omitted.Model {
		t.Errorf("images and model not mapped, but not marked omitted: %+v", tu.Omitted)
	}
	withModel, err := tryReadAll(p, "", nil, append(maps[:len(maps):len(maps)], "model=who")...)
	if err != nil || withModel[0].Turn.Omitted.Model || withModel[0].Turn.Model != "ann" {
		t.Errorf("model mapped: %+v, %v", withModel, err)
	}
	if len(recs[0].Labels) != 1 {
		t.Fatalf("labels %+v", recs[0].Labels)
	}
	l := recs[0].Labels[0]
	if string(l.Fields["overall_quality"]) != `"4"` || string(l.Fields["annotator"]) != `"ann"` || l.Mapped["overall_quality"] != "human_answer" {
		t.Errorf("label %+v", l)
	}
	if string(recs[1].Labels[0].Fields["overall_quality"]) != `2` {
		t.Errorf("label %+v", recs[1].Labels[0])
	}
	// A whole number written as a float (pandas: 14.0) is the sample 14 of the other files.
	os.WriteFile(filepath.Join(dir, "float.jsonl"), []byte(`{"score_id": 14.0, "q": "Q2", "a": "A2", "who": "bob", "human_answer": 2}`+"\n"+
		`{"score_id": 1.5, "q": "Q2", "a": "A2", "who": "bob", "human_answer": 2}`+"\n"), 0o644)
	floats, err := tryReadAll(filepath.Join(dir, "float.jsonl"), "", nil, maps...)
	if err != nil || len(floats) != 2 || floats[0].Turn.SampleID != "14" || floats[1].Turn.SampleID != "1.5" {
		t.Errorf("float ids: %+v, %v", floats, err)
	}
	// A label path in no record is a typo, not a file without labels: the file fails.
	typo := append(maps[:4:4], "label.overall_quality=human_anwser")
	_, err = tryReadAll(p, "", nil, typo...)
	if err == nil || !strings.Contains(err.Error(), "rater.jsonl:1: human_anwser (mapped to label.overall_quality): bad record: in no record of the file; check the --map path (the first record's keys: a, extra, human_answer, q, score_id, who)") {
		t.Errorf("a label path in no record: %v", err)
	}
	os.WriteFile(p, []byte(`{"score_id": 1}`+"\n"), 0o644)
	_, err = tryReadAll(p, "", nil, maps...)
	if err == nil || !strings.Contains(err.Error(), ":1: q (mapped to user_message), a (mapped to vlm_response): bad record: missing") {
		t.Errorf("error %v", err)
	}
	os.WriteFile(p, []byte(`{"score_id": {"x": 1}, "who": [1], "q": "Q"}`+"\n"), 0o644)
	_, err = tryReadAll(p, "", nil, maps...)
	if err == nil || !strings.Contains(err.Error(), ":1: bad record: score_id: expected text, got an object (mapped to sample_id); who: expected a name, got a list (mapped to annotator); a (mapped to vlm_response): missing") {
		t.Errorf("error %v", err)
	}
	if _, err := ParseFieldPaths([]string{"label.=x", "user_message=q", "vlm_response=a"}); err == nil {
		t.Error("label. without a field accepted")
	}
	paths, _ := ParseFieldPaths(maps)
	err = CheckLabelFields(paths, func(n string) bool { return n == "correctness" }, []string{"correctness"})
	if err == nil || !strings.Contains(err.Error(), "overall_quality is not a field of the rubric") {
		t.Errorf("CheckLabelFields: %v", err)
	}
}

// TestMapWithFrom: --map with --from adds to the format's turns: a label and its annotator
// from the record, a turn field overridden; a conversation of several turns takes no label.
func TestMapWithFrom(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "llava", "20250101_120000_samples_mme.jsonl")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(`{"doc_id": 0, "input": "<image> Q", "resps": [["A"]], "filtered_resps": ["A"], "target": "t", "doc": {"human": "4", "rater": "ann", "cat": "ocr"}}`+"\n"), 0o644)
	recs, err := tryReadAll(p, FormatLMMSEval, nil, "label.overall_quality=doc.human", "annotator=doc.rater", "task_type=doc.cat")
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	tu := recs[0].Turn
	if tu.UserMessage != "Q" || tu.TaskType != "ocr" || tu.VLMResponse != "A" {
		t.Errorf("turn %+v", tu)
	}
	if len(recs[0].Labels) != 1 || string(recs[0].Labels[0].Fields["overall_quality"]) != `"4"` || string(recs[0].Labels[0].Fields["annotator"]) != `"ann"` {
		t.Errorf("labels %+v", recs[0].Labels)
	}
	conv := filepath.Join(dir, "c.jsonl")
	os.WriteFile(conv, []byte(`{"id": "c", "score": 3, "conversations": [{"from": "human", "value": "a"}, {"from": "gpt", "value": "b"}, {"from": "human", "value": "c"}, {"from": "gpt", "value": "d"}]}`+"\n"), 0o644)
	if _, err := tryReadAll(conv, FormatShareGPT, nil, "label.overall_quality=score"); err == nil || !strings.Contains(err.Error(), "a conversation of 2 turns") {
		t.Errorf("a label on a conversation: %v", err)
	}
}

// TestMapFileBuiltin: a bare name that is no file reads the built-in map of that name; an
// unknown one lists the built-in maps; a line without = names its file and line.
func TestMapFileBuiltin(t *testing.T) {
	builtin := fstest.MapFS{"lab.map": {Data: []byte("# a comment\nuser_message=q\n\nvlm_response=a\n")}}
	got, err := ReadMapFileOr("lab", builtin)
	if err != nil || strings.Join(got, " ") != "user_message=q vlm_response=a" {
		t.Fatalf("%q, %v", got, err)
	}
	if _, err := ReadMapFileOr("other", builtin); err == nil || !strings.Contains(err.Error(), "built in: lab") {
		t.Errorf("unknown name: %v", err)
	}
	p := filepath.Join(t.TempDir(), "bad.map")
	os.WriteFile(p, []byte("user_message=q\nnonsense\n"), 0o644)
	if _, err := ReadMapFileOr(p, builtin); err == nil || !strings.Contains(err.Error(), p+":2:") {
		t.Errorf("bad line: %v", err)
	}
}
