package vistrajqa

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/convert/domainav2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// FuzzReader feeds arbitrary bytes to the reader. It must never panic; every record it
// returns must fit the JSON Schema (re-encoded canonically, so that encoding/json's leniency
// about key case cannot hide a difference) and convert without panicking into records whose
// evidence resolves; every error must be a located *RecordError or a read error.
// Seeds: testdata/in, the reader test's fixture, and testdata/fuzz/FuzzReader.
func FuzzReader(f *testing.F) {
	for _, path := range goldenInputs {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			f.Add(line)
		}
	}
	f.Add([]byte(strings.ReplaceAll(small, "\n", "")))
	sch, err := Schema()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), "fuzz.jsonl")
		for range 1000 {
			tr, err := r.Next()
			if err == io.EOF {
				return
			}
			var re *RecordError
			switch {
			case errors.As(err, &re):
				if re.File != "fuzz.jsonl" || re.Line < 1 || re.Msg == "" {
					t.Fatalf("unlocated error %+v", re)
				}
				continue
			case err != nil:
				return // the stream cannot be read further (line too long)
			}
			b, err := json.Marshal(canonical(tr))
			if err != nil {
				t.Fatal(err)
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if err := sch.Validate(inst); err != nil {
				t.Fatalf("accepted a record the schema rejects: %v\n%s", err, b)
			}
			for _, opt := range []Options{{}, {Multimodal: true}} {
				sample, mem, qa := Convert(tr, opt)
				checkConverted(t, tr, sample.Sessions, len(mem.MemorySessions), qa.Checkpoints)
			}
		}
		t.Fatal("reader did not reach the end")
	})
}

// canonical re-encodes a trajectory with the schema's field names.
func canonical(t *Trajectory) map[string]any {
	qa := func(qs []QAItem) []any {
		out := []any{}
		for _, q := range qs {
			out = append(out, map[string]any{"question": q.Question, "answer": q.Answer, "type": q.Type, "evidence": q.Evidence, "difficulty": q.Difficulty})
		}
		return out
	}
	var steps, probes, mps []any
	for _, s := range t.Steps {
		steps = append(steps, map[string]any{"step_num": s.StepNum, "observation": s.Observation, "feedback": s.Feedback, "image_caption": s.ImageCaption, "thought": s.Thought, "action": s.Action})
	}
	for _, p := range t.Probes {
		probes = append(probes, map[string]any{"after_step": p.AfterStep, "questions": qa(p.Questions)})
	}
	for _, m := range t.MemoryPoints {
		mps = append(mps, map[string]any{"mp_id": m.MPID, "content": m.Content, "type": m.Type, "source": m.Source, "step_num": m.StepNum, "is_update": m.IsUpdate, "original_memories": m.OriginalMemories, "importance": m.Importance, "update_type": m.UpdateType})
	}
	return map[string]any{"session_id": t.SessionID, "step_plan": steps, "probes": probes, "post_trajectory_qa": qa(t.PostTrajectoryQA), "memory_points": mps}
}

// checkConverted checks the invariants of a converted sample: two turns per step, one memory
// session per later session, one checkpoint per probe (+1 with post QA) covering a prefix.
func checkConverted(t *testing.T, tr *Trajectory, sessions []domainav2.Session, memSessions int, cps []domainav2.Checkpoint) {
	t.Helper()
	turns := 0
	for _, s := range sessions {
		turns += len(s.Dialogue)
	}
	if turns != 2*len(tr.Steps) {
		t.Fatalf("%d turns for %d steps", turns, len(tr.Steps))
	}
	if memSessions != len(sessions)-1 {
		t.Fatalf("%d memory sessions for %d sessions", memSessions, len(sessions))
	}
	want := len(tr.Probes)
	if len(tr.PostTrajectoryQA) > 0 {
		want++
	}
	if len(cps) != want {
		t.Fatalf("%d checkpoints, want %d", len(cps), want)
	}
	for i, cp := range cps {
		if len(cp.CoveredSessions) == 0 || len(cp.CoveredSessions) > len(sessions) {
			t.Fatalf("checkpoint %d covers %v of %d sessions", i, cp.CoveredSessions, len(sessions))
		}
		for k, id := range cp.CoveredSessions {
			if sessions[k].ID != id {
				t.Fatalf("checkpoint %d covers %v", i, cp.CoveredSessions)
			}
		}
	}
}
