package vistrajqa

import (
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/m3bench/m3eval/internal/convert/domainav2"
)

// NamespaceString is the namespace of the name-based (SHA-1, version 5) sample UUIDs:
// uuid = NewSHA1(Namespace, sample_id). It is itself the version-5 UUID of the URL
// "https://github.com/m3bench/m3eval/vistrajqa" in the standard URL namespace, fixed here so
// that reruns, and other tools that follow docs/vistrajqa.md, give identical files.
const NamespaceString = "b31083b8-0401-5fcd-bc5f-1ebc85290d4d"

// Namespace is NamespaceString parsed.
var Namespace = uuid.MustParse(NamespaceString)

// SampleUUID returns the deterministic uuid of a sample id.
func SampleUUID(sampleID string) string {
	return uuid.NewSHA1(Namespace, []byte(sampleID)).String()
}

// Options selects how a trajectory is converted.
type Options struct {
	// Multimodal puts image captions into attachments instead of the user turn's text.
	Multimodal bool
}

// Checkpoint ids: one per probe (probe_1, probe_2, ...) and the post-trajectory one.
const postCheckpointID = "post_trajectory"

// Convert maps one trajectory to its three records, as the guide lays out: sessions cut at
// the probes, two turns per step, memory points placed by step_num (the first session's in
// the sample, the others' in the memory line), one checkpoint per probe plus the
// post-trajectory one. The memory line and the QA line exist even when empty.
func Convert(t *Trajectory, opt Options) (domainav2.Sample, domainav2.MemoryLine, domainav2.QALine) {
	id := t.SessionID
	u := SampleUUID(id)
	ss := t.Sessions()

	sample := domainav2.Sample{UUID: u, SampleID: id, Sessions: make([]domainav2.Session, len(ss))}
	for k, sp := range ss {
		sess := domainav2.Session{ID: sp.ID, Dialogue: make([]domainav2.Turn, 0, 2*(sp.Last-sp.First+1))}
		for n := sp.First; n <= sp.Last; n++ {
			sess.Dialogue = append(sess.Dialogue, userTurn(&t.Steps[n-1], ImageID(sp.ID, n-sp.First+1), opt), assistantTurn(&t.Steps[n-1]))
		}
		sample.Sessions[k] = sess
	}

	mem := domainav2.MemoryLine{UUID: u, SampleID: id, MemorySessions: make([]domainav2.MemorySession, 0, len(ss)-1)}
	for _, sp := range ss[1:] {
		mem.MemorySessions = append(mem.MemorySessions, domainav2.MemorySession{SessionID: sp.ID, MemoryPoints: []domainav2.MemoryPoint{}})
	}
	// Non-nil so that the first session always carries "memory_points": [].
	sample.Sessions[0].MemoryPoints = []domainav2.MemoryPoint{}
	mpIDs := make(map[string]bool, len(t.MemoryPoints))
	for i := range t.MemoryPoints {
		m := &t.MemoryPoints[i]
		mpIDs[m.MPID] = true
		k := sessionOf(ss, m.StepNum)
		if k == 0 {
			sample.Sessions[0].MemoryPoints = append(sample.Sessions[0].MemoryPoints, memoryPoint(m))
		} else {
			ms := &mem.MemorySessions[k-1]
			ms.MemoryPoints = append(ms.MemoryPoints, memoryPoint(m))
		}
	}

	qa := domainav2.QALine{UUID: u, SampleID: id, Checkpoints: make([]domainav2.Checkpoint, 0, len(t.Probes)+1)}
	covered := make([]string, len(ss))
	for k, sp := range ss {
		covered[k] = sp.ID
	}
	for i, p := range t.Probes {
		qa.Checkpoints = append(qa.Checkpoints, domainav2.Checkpoint{
			CheckpointID:    "probe_" + strconv.Itoa(i+1),
			CoveredSessions: covered[: i+1 : i+1],
			Questions:       questions(p.Questions, mpIDs),
		})
	}
	if len(t.PostTrajectoryQA) > 0 {
		qa.Checkpoints = append(qa.Checkpoints, domainav2.Checkpoint{
			CheckpointID:    postCheckpointID,
			CoveredSessions: covered,
			Questions:       questions(t.PostTrajectoryQA, mpIDs),
		})
	}
	return sample, mem, qa
}

// userTurn is OBSERVATION + FEEDBACK, and in text-only mode IMAGE: <caption>; an empty part
// adds no line (Arena's observation is always empty, its information is all in the caption).
func userTurn(s *Step, imageID string, opt Options) domainav2.Turn {
	var b strings.Builder
	line := func(label, text string) {
		if text == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(label)
		b.WriteString(text)
	}
	line("OBSERVATION: ", s.Observation)
	line("FEEDBACK: ", s.Feedback)
	t := domainav2.Turn{Role: "user"}
	if opt.Multimodal {
		if s.ImageCaption != "" {
			t.Attachments = []domainav2.Attachment{{Type: domainav2.AttachmentImageCaption, Caption: s.ImageCaption, ImageID: imageID}}
		}
	} else {
		line("IMAGE: ", s.ImageCaption)
	}
	t.Content = b.String()
	return t
}

// assistantTurn is THOUGHT + ACTION.
func assistantTurn(s *Step) domainav2.Turn {
	parts := make([]string, 0, 2)
	if s.Thought != "" {
		parts = append(parts, "THOUGHT: "+s.Thought)
	}
	if s.Action != "" {
		parts = append(parts, "ACTION: "+s.Action)
	}
	return domainav2.Turn{Role: "assistant", Content: strings.Join(parts, "\n")}
}

// memoryPoint renames a memory point's fields as the guide's table does.
func memoryPoint(m *MemoryPoint) domainav2.MemoryPoint {
	orig := m.OriginalMemories
	if orig == nil {
		orig = []string{}
	}
	return domainav2.MemoryPoint{
		MemoryID:         m.MPID,
		MemoryContent:    m.Content,
		MemoryType:       m.Type,
		MemorySource:     m.Source,
		IsUpdate:         m.IsUpdate,
		OriginalMemories: orig,
		Importance:       m.Importance,
		UpdateType:       m.UpdateType,
	}
}

// questions maps QA items: type names from abbreviations, evidence ids to objects.
func questions(qs []QAItem, mpIDs map[string]bool) []domainav2.Question {
	out := make([]domainav2.Question, len(qs))
	for i, q := range qs {
		qt, _ := domainav2.QuestionTypeByAbbrev(q.Type) // the reader admits only known types
		ev := make([]domainav2.Evidence, len(q.Evidence))
		for j, e := range q.Evidence {
			// The reader resolved every id; what is not a memory point is an image.
			if mpIDs[e] {
				ev[j].MemoryID = e
			} else {
				ev[j].ImageID = e
			}
		}
		out[i] = domainav2.Question{
			Question:           q.Question,
			Answer:             q.Answer,
			Evidence:           ev,
			QuestionType:       qt.Name,
			QuestionTypeAbbrev: qt.Abbrev,
			Difficulty:         q.Difficulty,
		}
	}
	return out
}
