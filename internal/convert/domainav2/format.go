// Package domainav2 is the three-file "domain_a_v2" dataset layout that the memory-system
// evaluation framework loads (Mem-Gallery, A-Mem, MemoryOS and the other baselines read it):
// the Go types of its records, the names of its files, and a validator that checks a
// converted directory the way the framework's loader uses it.
//
// The package knows nothing about where a dataset came from; converters such as
// internal/convert/vistrajqa produce these records and run Validate on their own output.
package domainav2

// File names inside a converted directory, as the framework's loader opens them.
const (
	// MainFile holds a JSON array of Sample.
	MainFile = "domain_a_v2.json"
	// MemoryFile holds one MemoryLine per sample (JSON Lines).
	MemoryFile = "stage4_memory_points.jsonl"
	// QAFile holds one QALine per sample (JSON Lines).
	QAFile = "stage4b_qa_checkpoints.jsonl"
	// ManifestFile is m3eval's own side file (ignored by the framework): which input source
	// each sample came from, so that statistics can be reported per source.
	ManifestFile = "m3eval-manifest.json"
)

// Sample is one element of the array in MainFile: one dialogue cut into sessions.
type Sample struct {
	UUID     string    `json:"uuid"`
	SampleID string    `json:"sample_id"`
	Sessions []Session `json:"sessions"`
}

// Session is one run of dialogue after which the framework may fire a checkpoint.
// MemoryPoints is set on the first session only: the gold memory points of the first
// session live in MainFile, those of later sessions in MemoryFile. A non-nil empty slice is
// written as [] so that every first session carries the key.
type Session struct {
	ID           string        `json:"_v2_session_id"`
	Dialogue     []Turn        `json:"dialogue"`
	MemoryPoints []MemoryPoint `json:"memory_points,omitzero"`
}

// Turn is one dialogue message.
type Turn struct {
	Role        string       `json:"role"`
	Content     string       `json:"content"`
	Attachments []Attachment `json:"attachments,omitempty"`
	Timestamp   string       `json:"timestamp,omitempty"`
}

// Attachment is an image given to a multimodal baseline by its caption.
type Attachment struct {
	Type    string `json:"type"`
	Caption string `json:"caption"`
	ImageID string `json:"image_id"`
}

// AttachmentImageCaption is the only attachment type the converters write.
const AttachmentImageCaption = "image_caption"

// MemoryPoint is one gold memory point, the unit of the Memory Recall, Memory Correctness and
// Update Handling dimensions.
type MemoryPoint struct {
	MemoryID         string   `json:"memory_id"`
	MemoryContent    string   `json:"memory_content"`
	MemoryType       string   `json:"memory_type"`
	MemorySource     string   `json:"memory_source"`
	IsUpdate         bool     `json:"is_update"`
	OriginalMemories []string `json:"original_memories"`
	Importance       float64  `json:"importance"`
	UpdateType       string   `json:"update_type"`
}

// MemoryLine is one line of MemoryFile: the gold memory points of a sample's later sessions.
type MemoryLine struct {
	UUID           string          `json:"uuid"`
	SampleID       string          `json:"sample_id"`
	MemorySessions []MemorySession `json:"memory_sessions"`
}

// MemorySession is the memory points of one session.
type MemorySession struct {
	SessionID    string        `json:"session_id"`
	MemoryPoints []MemoryPoint `json:"memory_points"`
}

// QALine is one line of QAFile: the checkpoints of a sample.
type QALine struct {
	UUID        string       `json:"uuid"`
	SampleID    string       `json:"sample_id"`
	Checkpoints []Checkpoint `json:"checkpoints"`
}

// Checkpoint is a set of questions asked once the framework has fed CoveredSessions.
type Checkpoint struct {
	CheckpointID    string     `json:"checkpoint_id"`
	CoveredSessions []string   `json:"covered_sessions"`
	Questions       []Question `json:"questions"`
}

// Question is one QA item with its gold evidence.
type Question struct {
	Question           string     `json:"question"`
	Answer             string     `json:"answer"`
	Evidence           []Evidence `json:"evidence"`
	QuestionType       string     `json:"question_type"`
	QuestionTypeAbbrev string     `json:"question_type_abbrev"`
	Difficulty         string     `json:"difficulty"`
}

// Evidence points at a memory point or at an image; exactly one of the two is set.
type Evidence struct {
	MemoryID string `json:"memory_id,omitempty"`
	ImageID  string `json:"image_id,omitempty"`
}

// QuestionType is one of the nine QA categories, by framework name and abbreviation.
type QuestionType struct {
	Abbrev string
	Name   string
}

// QuestionTypes lists the nine known question types in the guide's order.
var QuestionTypes = []QuestionType{
	{"FR", "factual_recall"},
	{"DU", "dynamic_update"},
	{"MB", "memory_boundary"},
	{"TR", "temporal_reasoning"},
	{"KR", "knowledge_reasoning"},
	{"VFR", "visual_factual_recall"},
	{"VS", "visual_search"},
	{"VU", "visual_update"},
	{"CMR", "cross_modal_reasoning"},
}

// QuestionTypeByAbbrev returns the question type with abbreviation abbrev.
func QuestionTypeByAbbrev(abbrev string) (QuestionType, bool) {
	for _, t := range QuestionTypes {
		if t.Abbrev == abbrev {
			return t, true
		}
	}
	return QuestionType{}, false
}

// MemoryTypes and MemorySources are the values the guide allows for a memory point.
var (
	MemoryTypes   = []string{"event_memory", "state_memory", "spatial_memory"}
	MemorySources = []string{"primary", "secondary"}
)

// Manifest is the content of ManifestFile.
type Manifest struct {
	Generator     string           `json:"generator"`
	Mode          string           `json:"mode"`
	UUIDNamespace string           `json:"uuid_namespace,omitempty"`
	Sources       []ManifestSource `json:"sources"`
}

// ManifestSource names one input source (for VisTrajQA, one sessions-<source>.jsonl file
// or several with the same source name) and the samples converted from it.
type ManifestSource struct {
	Name      string   `json:"name"`
	Files     []string `json:"files"`
	SampleIDs []string `json:"sample_ids"`
}
