// Package illusion builds IllusionBench test sets and scores model answers on them.
//
// A test set is a difficulty-stratified sample of each split of the Hugging Face dataset
// arshiahemmat/IllusionBench, drawn exactly as the lab's make_arshia_testset.py draws it
// (CPython's random.Random(seed) through package pyrandom), so that a rebuilt test set has
// the very same rows as the published one. Scoring reads lmms-eval sample logs and computes
// shape and scene recall from the ground truth encoded in each image_name; Report renders
// the result as a terminal table, Markdown or JSON. flags.go holds what the two commands
// (m3eval illusion sample and score) need beyond that: their flags, checks and summaries.
package illusion

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/m3bench/m3eval/internal/chars"
)

// Difficulty is the difficulty group of an image. It is a string, not an int enum, because
// the groups are the keys of the summary.json the Python script writes, spelled as it
// spells them.
type Difficulty string

// The difficulty groups of the guide; Unknown is every name without a difficulty token.
const (
	Easy    Difficulty = "Easy"
	Medium  Difficulty = "Medium"
	Hard    Difficulty = "Hard"
	Unknown Difficulty = "Unknown"
)

// ParseDifficulty returns the difficulty group exactly as the guide's parse_difficulty:
// the first of "-easy-", "-medium-", "-hard-" found anywhere in the lowercased name wins
// (the order of the tokens, not their position, decides), otherwise Unknown.
// Sampling groups rows by this function, so it must not be "improved".
func ParseDifficulty(imageName string) Difficulty {
	name := strings.ToLower(imageName)
	switch {
	case strings.Contains(name, "-easy-"):
		return Easy
	case strings.Contains(name, "-medium-"):
		return Medium
	case strings.Contains(name, "-hard-"):
		return Hard
	}
	return Unknown
}

// ImageName is a parsed IllusionBench image_name,
// {shape}-{index}-{scene}-{difficulty}-{version}{ext}, e.g. animal-100-Sand_dune-Hard-1.1-64.png.
type ImageName struct {
	Shape          string     // the hidden shape class, e.g. "animal", "face_emoji"
	Index          string     // the decimal index as written, e.g. "100" or "007"
	Scene          string     // the scene class, e.g. "Sand_dune"
	Difficulty     Difficulty // Easy, Medium or Hard
	DifficultyText string     // the difficulty as written, e.g. "Hard"
	Version        string     // everything after the difficulty, e.g. "1.1-64"
	Ext            string     // the file extension as written, e.g. ".png"; may be empty
}

// String reassembles the name; for every parsed name, String returns the input.
func (n ImageName) String() string {
	return n.Shape + "-" + n.Index + "-" + n.Scene + "-" + n.DifficultyText + "-" + n.Version + n.Ext
}

// ErrImageName is wrapped by every ParseImageName error.
var ErrImageName = errors.New("malformed image_name")

// imageExts are the extensions ParseImageName strips, compared case-insensitively.
var imageExts = []string{".png", ".jpg", ".jpeg", ".webp"}

// ParseImageName parses {shape}-{index}-{scene}-{difficulty}-{version}{ext}.
//
// Shapes, scenes and versions may themselves contain '-' (and '_'), so the name is split on
// '-' and anchored on two fields that have a fixed form:
//   - the index is the first purely decimal part after the first part; everything before it
//     is the shape;
//   - the difficulty is the first part after the index and at least one scene part that is
//     easy, medium or hard (any case); the parts between are the scene and everything after
//     it, which must not be empty, is the version.
//
// A shape with a purely numeric '-' part (a hypothetical "covid-19") would be split at that
// part; IllusionBench has no such class, and String(Parse(x)) == x holds for every name this
// accepts. The extension is optional (.png, .jpg, .jpeg, .webp, any case).
func ParseImageName(s string) (ImageName, error) {
	var n ImageName
	base := s
	lower := strings.ToLower(s)
	for _, ext := range imageExts {
		if strings.HasSuffix(lower, ext) && len(s) > len(ext) {
			base, n.Ext = s[:len(s)-len(ext)], s[len(s)-len(ext):]
			break
		}
	}
	parts := strings.Split(base, "-")
	idx := -1
	for i := 1; i < len(parts); i++ {
		if chars.IsDigits(parts[i]) {
			idx = i
			break
		}
	}
	if idx < 0 {
		return ImageName{}, fmt.Errorf("%w %q: no numeric index after the shape", ErrImageName, s)
	}
	diff := difficultyPart(parts, idx+2)
	if diff < 0 {
		return ImageName{}, fmt.Errorf("%w %q: no -easy-, -medium- or -hard- after the scene", ErrImageName, s)
	}
	n.Shape = strings.Join(parts[:idx], "-")
	n.Index = parts[idx]
	n.Scene = strings.Join(parts[idx+1:diff], "-")
	n.DifficultyText = parts[diff]
	n.Difficulty = Difficulty(strings.ToUpper(n.DifficultyText[:1]) + strings.ToLower(n.DifficultyText[1:]))
	n.Version = strings.Join(parts[diff+1:], "-")
	switch {
	case n.Shape == "":
		return ImageName{}, fmt.Errorf("%w %q: empty shape", ErrImageName, s)
	case n.Scene == "":
		return ImageName{}, fmt.Errorf("%w %q: empty scene", ErrImageName, s)
	case n.Version == "":
		return ImageName{}, fmt.Errorf("%w %q: no version after the difficulty", ErrImageName, s)
	}
	return n, nil
}

// difficultyPart is the index of the first part from from on that is easy, medium or hard
// in any case, or -1.
func difficultyPart(parts []string, from int) int {
	for i := from; i < len(parts); i++ {
		switch strings.ToLower(parts[i]) {
		case "easy", "medium", "hard":
			return i
		}
	}
	return -1
}

// TaskTruth is the ground truth the lab's lmms-eval task derives from an image_name
// (parse_image_name in lmms_eval/tasks/unig2u/illusionbench/arshia_utils.py): its
// process_docs keeps exactly the rows this parses, so their order is the task's doc_id.
type TaskTruth struct {
	Shape, Scene string // shape_gt and scene_gt, spelled as in the name
	Difficulty   string // the difficulty part as written
}

// ParseTaskImageName is a line-for-line port of the task's parse_image_name: the base name
// without an image extension is split on '-' with empty parts dropped; the first part that
// is easy, medium or hard (any case) must not be the first; the part before it is the
// scene; the parts before that, less a trailing all-digit part, are the shape. It accepts
// names ParseImageName rejects (no index, no version): the task keeps those rows, so doc_ids
// must count them.
func ParseTaskImageName(s string) (TaskTruth, error) {
	base := s
	if i := strings.LastIndexAny(base, `/`); i >= 0 {
		base = base[i+1:] // os.path.basename
	}
	lower := strings.ToLower(base)
	for _, ext := range imageExts {
		if strings.HasSuffix(lower, ext) {
			base = base[:len(base)-len(ext)]
			break
		}
	}
	var parts []string
	for _, p := range strings.Split(base, "-") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	diff := difficultyPart(parts, 0)
	if diff < 1 {
		return TaskTruth{}, fmt.Errorf("%w %q: no difficulty token after the first part", ErrImageName, s)
	}
	t := TaskTruth{Scene: parts[diff-1], Difficulty: parts[diff]}
	shape := parts[:diff-1]
	if len(shape) >= 2 && isUnicodeDigits(shape[len(shape)-1]) {
		shape = shape[:len(shape)-1]
	}
	t.Shape = strings.Join(shape, "-")
	if t.Shape == "" || t.Scene == "" {
		return TaskTruth{}, fmt.Errorf("%w %q: empty shape or scene", ErrImageName, s)
	}
	return t, nil
}

// isUnicodeDigits is Python's re.fullmatch(r"\d+", s) on a str: any Unicode decimal digit.
func isUnicodeDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}
