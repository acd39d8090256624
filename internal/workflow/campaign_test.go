package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/usage"
	"github.com/m3bench/m3eval/internal/workflow"
)

type assignJSON struct {
	Overlap    int `json:"overlap"`
	Annotators []struct {
		Name      string   `json:"name"`
		Turns     int      `json:"turns"`
		Gold      int      `json:"gold"`
		SampleIDs []string `json:"sample_ids"`
		GoldIDs   []string `json:"gold_sample_ids"`
	} `json:"annotators"`
	Pairs []struct {
		A, B   string
		Shared int `json:"shared"`
	} `json:"pairs"`
	Warnings []string `json:"warnings"`
}

func decodeAssign(t *testing.T, out string) assignJSON {
	t.Helper()
	var a assignJSON
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return a
}

// checkCampaign: every sampled turn has exactly overlap annotators, loads within one, every
// pair shares a turn.
func checkCampaign(t *testing.T, a assignJSON, turns int) {
	t.Helper()
	per := map[string]int{}
	lo, hi := 1<<30, 0
	for _, an := range a.Annotators {
		lo, hi = min(lo, an.Turns), max(hi, an.Turns)
		for _, id := range an.SampleIDs {
			per[id]++
		}
	}
	if len(per) != turns {
		t.Errorf("%d turns assigned, want %d", len(per), turns)
	}
	for id, n := range per {
		if n != a.Overlap {
			t.Errorf("%s has %d annotators, want %d", id, n, a.Overlap)
		}
	}
	if hi-lo > 1 {
		t.Errorf("loads from %d to %d", lo, hi)
	}
	for _, p := range a.Pairs {
		if p.Shared == 0 {
			t.Errorf("%s and %s share no turn", p.A, p.B)
		}
	}
}

// TestSampleAssign (moved from TestSampleAssignCLI in cmd/m3eval/campaign_test.go).
func TestSampleAssign(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	importFiles(t, db, "")
	out := mustCommand(t, db, &workflow.SampleCommand{}, "--name", "pilot", "--n", "20", "--by", "action_type", "--min-per-stratum", "1", "--format", "json")
	var s struct {
		Size   int `json:"size"`
		Strata []struct {
			Key                         []string
			Available, Allocated, Drawn int
		} `json:"strata"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	drawn, avail := 0, 0
	for _, st := range s.Strata {
		drawn += st.Drawn
		avail += st.Available
		if st.Drawn < 1 || st.Drawn != st.Allocated || st.Drawn > st.Available {
			t.Errorf("stratum %v: %+v", st.Key, st)
		}
	}
	if drawn != 20 || avail != 35 || len(s.Strata) != 17 {
		t.Fatalf("drawn %d of %d over %d strata", drawn, avail, len(s.Strata))
	}
	if shown := mustCommand(t, db, &workflow.SampleCommand{}, "--show", "pilot", "--format", "json"); shown != out {
		t.Errorf("--show differs from what sample printed:\n%s\n%s", shown, out)
	}
	table := mustCommand(t, db, &workflow.SampleCommand{}, "--show", "pilot")
	if !strings.Contains(table, "mislead_subtle") || !strings.Contains(table, "total") {
		t.Errorf("table:\n%s", table)
	}
	if list := mustCommand(t, db, &workflow.SampleCommand{}, "--list"); !strings.Contains(list, "pilot") {
		t.Errorf("list:\n%s", list)
	}
	for _, bad := range [][]string{
		{"sample", "--name", "pilot", "--n", "5", "--by", "action_type"}, // exists
		{"sample", "--name", "x", "--n", "5", "--by", "colour"},          // unknown key
		{"sample", "--name", "x", "--n", "500", "--by", "action_type"},   // more than there is
		{"sample", "--name", "x", "--n", "5", "--by", "action_type", "--format", "xml"},
		{"sample", "--show", "nope"},
		{"assign", "--sample", "pilot", "--annotators", "a,b,c,d,e,f,g,h,i", "--overlap", "2"}, // 36 pairs, 20 turns
		{"assign", "--sample", "pilot", "--annotators", "a,a", "--overlap", "2"},
	} {
		var c command = &workflow.SampleCommand{}
		if bad[0] == "assign" {
			c = &workflow.AssignCommand{}
		}
		if _, err := runCommand(t, db, c, bad[1:]...); err == nil {
			t.Errorf("m3eval %v passed", bad)
		}
	}
	if _, err := runCommand(t, db, &workflow.SampleCommand{}, "--name", "x", "--n", "5", "--by", "colour"); !isUsage(err) {
		t.Errorf("unknown --by is not a usage error: %v", err)
	}

	a := decodeAssign(t, mustCommand(t, db, &workflow.AssignCommand{}, "--sample", "pilot", "--annotators", "alice,bob,carol,dave", "--overlap", "2", "--format", "json"))
	checkCampaign(t, a, 20)
	if a.Annotators[0].Turns != 10 {
		t.Errorf("alice has %d turns", a.Annotators[0].Turns)
	}
	// The same database, options and seed elsewhere give the same sample and assignment.
	db2 := filepath.Join(dir, "m2.db")
	importFiles(t, db2, "")
	mustCommand(t, db2, &workflow.SampleCommand{}, "--name", "pilot", "--n", "20", "--by", "action_type", "--min-per-stratum", "1")
	a2 := decodeAssign(t, mustCommand(t, db2, &workflow.AssignCommand{}, "--sample", "pilot", "--annotators", "alice,bob,carol,dave", "--overlap", "2", "--format", "json"))
	for i := range a.Annotators {
		if !slices.Equal(a.Annotators[i].SampleIDs, a2.Annotators[i].SampleIDs) {
			t.Errorf("%s: not deterministic: %v vs %v", a.Annotators[i].Name, a.Annotators[i].SampleIDs, a2.Annotators[i].SampleIDs)
		}
	}

	// alice starts two of her turns; then a fifth annotator and overlap 3.
	st, err := store.Open(context.Background(), db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := st.OpenCampaignQueue(context.Background(), "alice", "pilot", nil)
	if err != nil {
		t.Fatal(err)
	}
	started := a.Annotators[0].SampleIDs[:2]
	for _, sid := range started {
		r, ok, err := q.Find(context.Background(), sid)
		if err != nil || !ok {
			t.Fatalf("find %s in alice's queue: %v %v", sid, ok, err)
		}
		v := "4"
		if _, err := q.SetValue(context.Background(), session.Edit{TurnID: r.TurnID, RubricVersion: "v"}, "overall_quality", &v); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	if _, err := runCommand(t, db, &workflow.AssignCommand{}, "--sample", "pilot", "--annotators", "bob,carol,dave,erin", "--overlap", "2"); err == nil {
		t.Error("dropping alice passed")
	}
	if _, err := runCommand(t, db, &workflow.AssignCommand{}, "--sample", "pilot", "--annotators", "alice,bob,carol,dave", "--overlap", "1"); err == nil {
		t.Error("shrinking the overlap passed")
	}
	ext := decodeAssign(t, mustCommand(t, db, &workflow.AssignCommand{}, "--sample", "pilot", "--annotators", "alice,bob,carol,dave,erin", "--overlap", "3", "--format", "json"))
	checkCampaign(t, ext, 20)
	for _, sid := range started {
		if !slices.Contains(ext.Annotators[0].SampleIDs, sid) {
			t.Errorf("alice's started %s moved away", sid)
		}
	}
	if ext.Overlap != 3 || len(ext.Annotators) != 5 {
		t.Errorf("extension: overlap %d, %d annotators", ext.Overlap, len(ext.Annotators))
	}

	// Gold: the demo's three labeled turns, a fifth of each queue.
	gold := mustCommand(t, db, &workflow.AssignCommand{}, "--sample", "pilot", "--annotators", "alice,bob,carol,dave,erin", "--overlap", "3",
		"--gold", "../../annotations/demo/labeled_sample.json", "--gold-rate", "0.2", "--format", "json")
	g := decodeAssign(t, gold)
	checkCampaign(t, g, 20)
	for i, an := range g.Annotators {
		// 12 turns at a rate of 0.2 want 3 gold turns: all three but those among the
		// annotator's own sampled turns.
		want := 0
		for _, gid := range []string{"demo_en_street_2_turn_4", "demo_en_apples_1_turn_5", "demo_zh_umbrella_0_turn_7"} {
			if !slices.Contains(an.SampleIDs, gid) {
				want++
			}
		}
		if an.Gold != want {
			t.Errorf("%s has %d gold turns, want %d", an.Name, an.Gold, want)
		}
		for _, gid := range an.GoldIDs {
			if slices.Contains(an.SampleIDs, gid) {
				t.Errorf("%s has %s both as a sampled and a gold turn", an.Name, gid)
			}
		}
		if !slices.Equal(an.SampleIDs, ext.Annotators[i].SampleIDs) {
			t.Errorf("%s: adding gold moved sampled turns", an.Name)
		}
	}
	if out := mustCommand(t, db, &workflow.AssignCommand{}, "--sample", "pilot", "--show"); !strings.Contains(out, "gold rate 0.2") || !strings.Contains(out, "erin") {
		t.Errorf("--show:\n%s", out)
	}
	// A re-run without the gold flags keeps the gold rate and the gold turns given.
	again := decodeAssign(t, mustCommand(t, db, &workflow.AssignCommand{}, "--sample", "pilot", "--annotators", "alice,bob,carol,dave,erin", "--overlap", "3", "--format", "json"))
	for i, an := range again.Annotators {
		if !slices.Equal(an.GoldIDs, g.Annotators[i].GoldIDs) || !slices.Equal(an.SampleIDs, g.Annotators[i].SampleIDs) {
			t.Errorf("%s: a plain re-run moved work: gold %v -> %v", an.Name, g.Annotators[i].GoldIDs, an.GoldIDs)
		}
	}
}

// TestAssignGoldErrors: a bad gold file is named with its line and nothing is assigned.
func TestAssignGoldErrors(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "g.db")
	importFiles(t, db, "")
	mustCommand(t, db, &workflow.SampleCommand{}, "--name", "p", "--n", "10", "--by", "action_type")
	for name, body := range map[string]string{
		"unknown.jsonl":  `{"sample_id":"nope_turn_1","episode_id":"nope","turn":1,"action_type":"initial","task_type":"t","user_message":"q","vlm_response":"a","expected_answer":"e","human_annotation":{"correctness":3,"reasoning_completeness":3,"overall_quality":3}}` + "\n",
		"nolabel.jsonl":  `{"sample_id":"demo_en_park_3_turn_1","episode_id":"demo_en_park_3","turn":1,"action_type":"initial","task_type":"t","user_message":"q","vlm_response":"a","expected_answer":"e"}` + "\n",
		"badvalue.jsonl": `{"sample_id":"demo_en_park_3_turn_1","episode_id":"demo_en_park_3","turn":1,"action_type":"initial","task_type":"t","user_message":"q","vlm_response":"a","expected_answer":"e","human_annotation":{"correctness":9,"reasoning_completeness":3,"overall_quality":3}}` + "\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := runCommand(t, db, &workflow.AssignCommand{}, "--sample", "p", "--annotators", "a,b", "--overlap", "2", "--gold", p)
		if err == nil || !strings.Contains(err.Error(), p+":1") {
			t.Errorf("%s: error %v, want one naming %s:1", name, err, p)
		}
	}
	if out := mustCommand(t, db, &workflow.AssignCommand{}, "--sample", "p", "--show"); !strings.Contains(out, "not assigned yet") {
		t.Errorf("a failed assign left an assignment:\n%s", out)
	}
}

// TestRepeat (moved from TestRepeatCLI in cmd/m3eval/campaign_test.go): assign --repeat puts a share of each queue again after it; annotate opens
// those once the queue is done; qc flags the annotator whose second answers differ.
func TestRepeat(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	importFiles(t, db, "")
	mustCommand(t, db, &workflow.SampleCommand{}, "--name", "p", "--n", "20", "--by", "action_type")
	a := decodeAssign(t, mustCommand(t, db, &workflow.AssignCommand{}, "--sample", "p", "--annotators", "ann,ben", "--overlap", "2", "--repeat", "0.2", "--format", "json"))
	var repeats struct {
		Annotators []struct {
			Repeats   int      `json:"repeats"`
			RepeatIDs []string `json:"repeat_sample_ids"`
		} `json:"annotators"`
	}
	out := mustCommand(t, db, &workflow.AssignCommand{}, "--sample", "p", "--show", "--format", "json")
	if err := json.Unmarshal([]byte(out), &repeats); err != nil {
		t.Fatal(err)
	}
	for i, r := range repeats.Annotators {
		if r.Repeats != 4 {
			t.Errorf("%s repeats %d turns, want 4 of 20", a.Annotators[i].Name, r.Repeats)
		}
		for _, id := range r.RepeatIDs {
			if !slices.Contains(a.Annotators[i].SampleIDs, id) {
				t.Errorf("%s repeats %s, not one of their turns", a.Annotators[i].Name, id)
			}
		}
	}
	s, err := store.Open(ctx, db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	labelAll := func(q *store.Queue, score func(sampleID string) string) int {
		t.Helper()
		n := 0
		ref, ok, err := q.First(ctx, true)
		for ok && err == nil {
			it, lerr := q.Load(ctx, ref)
			if lerr != nil {
				t.Fatal(lerr)
			}
			e := session.Edit{TurnID: ref.TurnID, RubricVersion: "v"}
			v := score(it.Turn.SampleID)
			for _, f := range []string{"correctness", "reasoning_completeness", "overall_quality"} {
				if _, err := q.SetValue(ctx, e, f, &v); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := q.Submit(ctx, e); err != nil {
				t.Fatal(err)
			}
			n++
			ref, ok, err = q.Next(ctx, ref, true)
		}
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	quality := func(id string) string { return strconv.Itoa(1 + len(id)%5) }
	for _, who := range []string{"ann", "ben"} {
		q, err := workflow.CampaignQueue(ctx, s, who, "p", nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := labelAll(q, quality); n != 20 {
			t.Fatalf("%s labeled %d turns of the main queue", who, n)
		}
		// With the queue done, annotate opens the repeated turns, blank, under the same name.
		rq, err := workflow.CampaignQueue(ctx, s, who, "p", nil)
		if err != nil {
			t.Fatal(err)
		}
		if rq.Annotator() != who || rq.Campaign() != "p" {
			t.Fatalf("repeat queue of %s: %q %q", who, rq.Annotator(), rq.Campaign())
		}
		second := quality
		if who == "ben" {
			second = func(id string) string { return strconv.Itoa(5 - len(id)%5) }
		}
		if n := labelAll(rq, second); n != 4 {
			t.Fatalf("%s labeled %d repeated turns", who, n)
		}
	}
	var rep struct {
		Annotators []struct {
			Annotator      string   `json:"annotator"`
			Items          int      `json:"items"`
			IntraAgreement *float64 `json:"intra_agreement"`
			Flags          []struct{ Check string }
		} `json:"annotators"`
	}
	if err := json.Unmarshal([]byte(mustCommand(t, db, workflow.NewQCCommand(), "--campaign", "p", "--format", "json")), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Annotators) != 2 {
		t.Fatalf("qc reports %d annotators (the hidden repeat rows must not count)", len(rep.Annotators))
	}
	for _, a := range rep.Annotators {
		intraFlag := slices.ContainsFunc(a.Flags, func(f struct{ Check string }) bool { return f.Check == "intra_agreement" })
		if a.Items != 20 || a.IntraAgreement == nil || (a.Annotator == "ann") == intraFlag {
			t.Errorf("%s: %d items, intra %v, flagged %v", a.Annotator, a.Items, a.IntraAgreement, intraFlag)
		}
	}
	// m3eval status writes the store's status with workflow.WriteStatus.
	status, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out2 strings.Builder
	if err := workflow.WriteStatus(&out2, db, status); err != nil {
		t.Fatal(err)
	}
	if out := out2.String(); strings.Contains(out, "repeat") || !strings.Contains(out, "ben") {
		t.Errorf("status shows the hidden repeat rows (or not ben):\n%s", out)
	}
	hidden, err := s.IsRepeatRow(ctx, "ben (repeat 2)")
	if err != nil || !hidden {
		t.Fatalf("ben's repeat row: %v %v", hidden, err)
	}
	// m3eval annotate opens its queue with workflow.AnnotatorQueue.
	if _, err := workflow.AnnotatorQueue(ctx, s, "ben (repeat 2)", "", nil, ""); !errors.Is(err, usage.Err) {
		t.Errorf("annotating under a hidden repeat row: %v", err)
	}
}

// TestSampleSaysEmptyStrata: a proportional draw that gives some strata no turn says which
// and how to give each one (issue 25 item 17); with --min-per-stratum 1 nothing is said.
func TestSampleSaysEmptyStrata(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	importFiles(t, db, "")
	out := mustCommand(t, db, &workflow.SampleCommand{}, "--name", "pilot", "--n", "12", "--by", "action_type", "--seed", "3")
	for _, want := range []string{
		"sample pilot: 6 of 17 strata got no turns (--n 12 shared in proportion to their size): ambiguous_reference, attribute_swap, cross_image_confusion, long_context_recall, memory_injection, mislead_subtle",
		"--min-per-stratum 1 and --n 17 or more",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("sample said:\n%s\nwant %q", out, want)
		}
	}
	out = mustCommand(t, db, &workflow.SampleCommand{}, "--name", "all", "--n", "17", "--by", "action_type", "--min-per-stratum", "1")
	if strings.Contains(out, "got no turns") {
		t.Errorf("a sample with every stratum drawn warns:\n%s", out)
	}
}
