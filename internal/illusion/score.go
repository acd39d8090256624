package illusion

import (
	"cmp"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/m3bench/m3eval/internal/agree"
)

// Kind is what a task asks for: the hidden shape or the scene.
type Kind string

// The two IllusionBench questions.
const (
	KindShape Kind = "shape"
	KindScene Kind = "scene"
)

// Normalize prepares text for recall matching as the guide says: lowercase, punctuation
// removed, whitespace collapsed. '_' and '-' become spaces rather than vanishing because
// class names use them between words (Sand_dune, face_emoji, mercedes-benz) and answers
// write those words apart; every other punctuation or symbol is deleted, so "McDonald's"
// still contains "mcdonalds".
func Normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r == '_' || r == '-' || unicode.IsSpace(r):
			space = b.Len() > 0
		case unicode.IsPunct(r) || unicode.IsSymbol(r):
			// dropped without a space
		default:
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// spellings lists the accepted spellings of a normalized class name. The generator of the
// dataset spells the ICON class "Stationary" while the prompts offer "Stationery"; a model
// answering either has recognised the class.
func spellings(label string) []string {
	switch label {
	case "stationary", "stationery":
		return []string{"stationary", "stationery"}
	}
	return []string{label}
}

// Match reports whether the response names the ground truth: the normalized truth (in any
// accepted spelling) is contained in the normalized response.
func Match(response, truth string) bool {
	return matchNormalized(Normalize(response), Normalize(truth))
}

func matchNormalized(resp, truth string) bool {
	if truth == "" {
		return false
	}
	for _, s := range spellings(truth) {
		if strings.Contains(resp, s) {
			return true
		}
	}
	return false
}

// Stat is a recall with its sample size and 95% Wilson interval.
type Stat struct {
	N      int     `json:"n"`
	Hits   int     `json:"hits"`
	Recall float64 `json:"recall"`
	Lo     float64 `json:"ci_low"`
	Hi     float64 `json:"ci_high"`
}

// NewStat computes the recall of hits out of n.
func NewStat(hits, n int) Stat {
	s := Stat{N: n, Hits: hits, Recall: math.NaN()}
	if n > 0 {
		s.Recall = float64(hits) / float64(n)
	}
	s.Lo, s.Hi = agree.Wilson(hits, n)
	return s
}

// Item is one scored answer.
type Item struct {
	Split    string
	Kind     Kind
	DocID    int
	Name     ImageName
	Response string
	Truth    string // the normalized ground-truth class
	Answer   string // the class the response names first, or a description of it
	Hit      bool
}

// Class returns the item's normalized class along the given dimension.
func (it Item) Class(by Kind) string {
	if by == KindScene {
		return Normalize(it.Name.Scene)
	}
	return Normalize(it.Name.Shape)
}

var (
	shapeLine = regexp.MustCompile(`(?im)^\s*shape\s*:\s*(.+?)\s*$`)
	sceneLine = regexp.MustCompile(`(?im)^\s*scene\s*:\s*(.+?)\s*$`)
)

// Field returns the part of a response that answers the kind when the response follows the
// two-line "Shape: ...\nScene: ..." format of the combined task, else the whole response.
// The last such line wins, as in the lab's field extraction.
func Field(response string, k Kind) string {
	re := shapeLine
	if k == KindScene {
		re = sceneLine
	}
	if m := re.FindAllStringSubmatch(response, -1); len(m) > 0 {
		return m[len(m)-1][1]
	}
	return response
}

// Score scores one answer. vocab holds the normalized class names the answer may name (the
// split's shapes and scenes); it labels wrong answers for the confusion listing.
func Score(split string, kind Kind, docID int, name ImageName, response string, vocab []string) Item {
	truth := Normalize(name.Shape)
	if kind == KindScene {
		truth = Normalize(name.Scene)
	}
	resp := Normalize(response)
	it := Item{Split: split, Kind: kind, DocID: docID, Name: name, Response: response, Truth: truth,
		Hit: matchNormalized(resp, truth)}
	it.Answer = answerLabel(resp, vocab)
	return it
}

// answerLabel names what a normalized response says: the vocabulary class mentioned first
// (the longer one on a tie, so "sand dune" beats "sand"), "(empty)" or the response itself,
// shortened.
func answerLabel(resp string, vocab []string) string {
	if resp == "" {
		return "(empty)"
	}
	best, at := "", -1
	for _, v := range vocab {
		for _, s := range spellings(v) {
			if i := strings.Index(resp, s); i >= 0 && (at < 0 || i < at || i == at && len(v) > len(best)) {
				best, at = v, i
			}
		}
	}
	if at >= 0 {
		return best
	}
	const maxLen = 40
	if r := []rune(resp); len(r) > maxLen {
		return "other: " + string(r[:maxLen]) + "…"
	}
	return "other: " + resp
}

// Vocabulary returns the sorted normalized shape and scene classes of the given names.
func Vocabulary(names []ImageName) []string {
	set := map[string]bool{}
	for _, n := range names {
		set[Normalize(n.Shape)] = true
		set[Normalize(n.Scene)] = true
	}
	delete(set, "")
	return slices.Sorted(maps.Keys(set))
}

// Row is one line of a recall table: a split, a kind and a group of items.
type Row struct {
	Split string `json:"split"`
	Kind  Kind   `json:"kind"`
	Group string `json:"group"` // "all", a difficulty, or a class with --by
	Stat
}

// difficultyOrder sorts difficulty groups in their natural order rather than by name.
var difficultyOrder = map[string]int{"Easy": 0, "Medium": 1, "Hard": 2}

// Summarize returns, for every split and kind in order of first appearance, the overall
// recall and one row per difficulty (Easy, Medium, Hard) or, with by set, per class of
// that dimension in alphabetical order.
func Summarize(items []Item, by Kind) []Row {
	type key struct {
		split string
		kind  Kind
	}
	var order []key
	groups := map[key]map[string][2]int{}
	for _, it := range items {
		k := key{it.Split, it.Kind}
		if groups[k] == nil {
			order = append(order, k)
			groups[k] = map[string][2]int{}
		}
		g := string(it.Name.Difficulty)
		if by != "" {
			g = it.Class(by)
		}
		for _, name := range []string{"all", g} {
			c := groups[k][name]
			c[1]++
			if it.Hit {
				c[0]++
			}
			groups[k][name] = c
		}
	}
	var rows []Row
	for _, k := range order {
		names := make([]string, 0, len(groups[k]))
		for g := range groups[k] {
			if g != "all" {
				names = append(names, g)
			}
		}
		slices.SortFunc(names, func(a, b string) int {
			if by == "" {
				return cmp.Compare(difficultyOrder[a], difficultyOrder[b])
			}
			return cmp.Compare(a, b)
		})
		for _, g := range append([]string{"all"}, names...) {
			c := groups[k][g]
			rows = append(rows, Row{Split: k.split, Kind: k.kind, Group: g, Stat: NewStat(c[0], c[1])})
		}
	}
	return rows
}

// Confusion counts one wrong answer given for one true class.
type Confusion struct {
	Split  string `json:"split"`
	Kind   Kind   `json:"kind"`
	Truth  string `json:"truth"`
	Answer string `json:"answer"`
	Count  int    `json:"count"`
}

// Confusions returns the top most frequent (truth, wrong answer) pairs over all splits and
// kinds, most frequent first; ties are broken by split, kind, truth and answer so the
// listing is stable. top <= 0 returns all.
func Confusions(items []Item, top int) []Confusion {
	counts := map[Confusion]int{}
	for _, it := range items {
		if !it.Hit {
			counts[Confusion{Split: it.Split, Kind: it.Kind, Truth: it.Truth, Answer: it.Answer}]++
		}
	}
	out := make([]Confusion, 0, len(counts))
	for c, n := range counts {
		c.Count = n
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Confusion) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Split, b.Split),
			cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Truth, b.Truth), cmp.Compare(a.Answer, b.Answer))
	})
	if top > 0 && len(out) > top {
		out = out[:top]
	}
	return out
}

// TaskRecallMatch is the upstream task's _recall_match: the response, stripped and
// lowercased, contains the ground truth stripped and lowercased, or that with '_' or '-'
// written as a space. Nothing else is normalized.
func TaskRecallMatch(pred, gt string) bool {
	if pred == "" || gt == "" {
		return false
	}
	p := strings.ToLower(strings.TrimSpace(pred))
	g := strings.ToLower(strings.TrimSpace(gt))
	for _, v := range []string{g, strings.ReplaceAll(g, "_", " "), strings.ReplaceAll(g, "-", " ")} {
		if v != "" && strings.Contains(p, v) {
			return true
		}
	}
	return false
}

// TaskField is the upstream task's _extract_fields for one kind: the value of the last line
// of the form "Shape: value" (or "Scene: value"), any case, else the whole response.
// Lines are split as Python's str.splitlines splits them.
func TaskField(response string, k Kind) string {
	label := "shape"
	if k == KindScene {
		label = "scene"
	}
	found := ""
	for _, line := range pySplitLines(response) {
		t := strings.TrimLeftFunc(line, unicode.IsSpace)
		if len(t) < len(label) || !strings.EqualFold(t[:len(label)], label) {
			continue
		}
		rest := strings.TrimLeftFunc(t[len(label):], unicode.IsSpace)
		if !strings.HasPrefix(rest, ":") {
			continue
		}
		// The task's pattern needs at least one character after the colon; a value of
		// spaces matches and overwrites an earlier line with "".
		if rest[1:] != "" {
			found = strings.TrimSpace(rest[1:])
		}
	}
	if found == "" {
		return response
	}
	return found
}

// pySplitLines splits like Python's str.splitlines(): on \n, \r\n, \r, \v, \f, \x1c-\x1e,
// \x85, U+2028 and U+2029.
func pySplitLines(s string) []string {
	var out []string
	start := 0
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		switch rs[i] {
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			out = append(out, string(rs[start:i]))
			start = i + 1
		case '\r':
			out = append(out, string(rs[start:i]))
			if i+1 < len(rs) && rs[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	if start < len(rs) {
		out = append(out, string(rs[start:]))
	}
	return out
}
