package judge

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/m3bench/m3eval/internal/chars"
)

//go:embed rules.json
var defaultRules []byte

// DefaultRulesJSON is the built-in rule set, as embedded.
func DefaultRulesJSON() []byte { return bytes.Clone(defaultRules) }

// ErrRules marks a rule file that cannot be used.
var ErrRules = errors.New("invalid rules")

// Rules are the judge's thresholds and word lists: data, so that a lab can tune them without a
// rebuild (m3eval judge --rules FILE).
type Rules struct {
	// Name is the version the file declares; Version adds its content hash, so that two
	// different files that declare the same name never pass for one rule set.
	Name    string `json:"version"`
	Version string `json:"-"`
	// Source is the file's bytes.
	Source []byte `json:"-"`

	// Fields maps the judge's dimensions (correctness, reasoning, misleading, consistency,
	// overall) to rubric field names.
	Fields map[string]string `json:"fields"`

	Correctness struct {
		// Beta weighs recall over precision in the token F-score (1: the F1; verbose correct
		// answers need recall to count more).
		Beta float64 `json:"beta"`
		// Levels are the F-score thresholds for 5, 4, 3 and 2; below the last is 1.
		Levels           []float64 `json:"levels"`
		CapImageConflict int       `json:"cap_image_conflict"`
		CapImageMixed    int       `json:"cap_image_mixed"`
		CapValueConflict int       `json:"cap_value_conflict"`
		CapNegated       int       `json:"cap_negated"`
		CapFalseAdopted  int       `json:"cap_false_adopted"`
		CapHedged        int       `json:"cap_hedged"`
		// ConflictClasses are the value classes whose disagreement caps the score.
		ConflictClasses []string `json:"conflict_classes"`
	} `json:"correctness"`

	// Synonyms are groups of English words compared as one (the first of the group).
	// Chinese is compared character by character and needs none.
	Synonyms [][]string `json:"synonyms"`

	Reasoning struct {
		ShortEn int `json:"short_en"` // fewer content tokens: answer only
		ShortZh int `json:"short_zh"`
		LongEn  int `json:"long_en"` // at least: a long, descriptive answer
		LongZh  int `json:"long_zh"`
		// DetailClauses: at least this many clauses with content make a detailed answer.
		DetailClauses int `json:"detail_clauses"`
	} `json:"reasoning"`

	Metrics struct {
		ConciseEn    int     `json:"concise_en"`
		ConciseZh    int     `json:"concise_zh"`
		UptakeRecall float64 `json:"uptake_recall"`
		SpecificCues int     `json:"specific_cues"`
		LengthBins   []int   `json:"length_bins"`
	} `json:"metrics"`

	// Values are the attribute values the rules compare: class → canonical value → spellings
	// in any language.
	Values     map[string]map[string][]string `json:"values"`
	ImageWords map[string][]string            `json:"image_words"`
	Ordinals   map[string]int                 `json:"ordinals"`
	Lang       map[string]*LangRules          `json:"lang"`
	// Objects are the things facts are about: canonical name → spellings in any language
	// (the COCO categories, clothing and scene parts).
	Objects map[string][]string `json:"objects"`
	// PartCues mark a clause whose count is of a part ("two on top"), not of the whole.
	PartCues map[string][]string `json:"part_cues"`
	// ObjectStop are words that hold an object's spelling without naming it (停车场 holds
	// 车); they are skipped when objects are looked for.
	ObjectStop []string `json:"object_stop"`
	// ConsistencyClasses are the kinds of statement context consistency compares: value
	// classes, "number" (counts) and "image" (which image holds an object).
	ConsistencyClasses []string `json:"consistency_classes"`

	values  []valueWord       // every spelling, longest first
	objects []valueWord       // every object spelling, longest first
	synonym map[string]string // token → the first word of its group
}

// LangRules are the word lists of one language.
type LangRules struct {
	Articles     []string       `json:"articles"`
	NumberWords  map[string]int `json:"number_words"`
	Stopwords    []string       `json:"stopwords"`
	Negation     []string       `json:"negation"`
	ClauseBreaks []string       `json:"clause_breaks"`
	Reject       []string       `json:"reject"`
	Accept       []string       `json:"accept"`
	Hedge        []string       `json:"hedge"`
	Observation  []string       `json:"observation"`
	Inference    []string       `json:"inference"`
	Evidence     []string       `json:"evidence"`
	Missing      []string       `json:"missing"`
	Acknowledge  []string       `json:"acknowledge"`
	Clarify      []string       `json:"clarify"`
	Redundancy   []string       `json:"redundancy"`
	Specific     []string       `json:"specific"`
	// Copula links an object to the value after it ("the car is red", "车是红色的").
	Copula []string `json:"copula"`
	// Distributive words make the number after them in their clause a share, not a count
	// ("each child gets one apple", "每人一个").
	Distributive []string `json:"distributive"`

	stop     map[string]bool
	articles map[string]bool
	index    *phraseIndex
	numbers  []numberWord // longest first
	// words is what tokens asks of a Latin word, in one look-up instead of three: whether it
	// is dropped (a stop word or an article) and the numbers it starts, by their first word
	// ("a" → "a dozen", "a couple of").
	words map[string]wordInfo
}

// wordInfo is what the tokenizer knows of one word.
type wordInfo struct {
	dropped bool
	numbers []numberWord
}

type numberWord struct {
	word string
	n    int
}

// valueWord is one spelling of an attribute value.
type valueWord struct {
	spelling, class, value string
	cjk                    bool
}

// Dimensions the rule file must map to rubric fields.
var dimensions = []string{"correctness", "reasoning", "misleading", "consistency", "overall"}

// DefaultRules parses the built-in rules.
func DefaultRules() *Rules {
	r, err := ParseRules(defaultRules)
	if err != nil {
		panic("judge: built-in rules: " + err.Error())
	}
	return r
}

// ParseRules reads a rule file.
func ParseRules(data []byte) (*Rules, error) {
	r := &Rules{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRules, err)
	}
	if strings.TrimSpace(r.Name) == "" {
		return nil, fmt.Errorf("%w: \"version\" is missing", ErrRules)
	}
	for _, d := range dimensions {
		if r.Fields[d] == "" {
			return nil, fmt.Errorf("%w: fields.%s must name a rubric field", ErrRules, d)
		}
	}
	c := &r.Correctness
	if len(c.Levels) != 4 || !sort.SliceIsSorted(c.Levels, func(i, j int) bool { return c.Levels[i] > c.Levels[j] }) {
		return nil, fmt.Errorf("%w: correctness.levels must be 4 decreasing thresholds (for 5, 4, 3, 2)", ErrRules)
	}
	if c.Beta <= 0 {
		return nil, fmt.Errorf("%w: correctness.beta must be > 0", ErrRules)
	}
	for _, l := range []string{"en", "zh"} {
		if r.Lang[l] == nil {
			return nil, fmt.Errorf("%w: lang.%s is missing", ErrRules, l)
		}
	}
	sum := sha256.Sum256(data)
	r.Version = r.Name + "+" + hex.EncodeToString(sum[:4])
	r.Source = bytes.Clone(data)
	r.prepare()
	return r, nil
}

// prepare builds the look-up structures. Word lists are normalized the way texts are, so a
// list may be written with full-width characters or Chinese numerals.
func (r *Rules) prepare() {
	for _, lr := range r.Lang {
		lr.stop = map[string]bool{}
		for _, w := range lr.Stopwords {
			lr.stop[w] = true
		}
		lr.articles = map[string]bool{}
		for _, w := range lr.Articles {
			lr.articles[w] = true
		}
		for w, n := range lr.NumberWords {
			lr.numbers = append(lr.numbers, numberWord{strings.ToLower(w), n})
		}
		sort.Slice(lr.numbers, func(i, j int) bool {
			if len(lr.numbers[i].word) != len(lr.numbers[j].word) {
				return len(lr.numbers[i].word) > len(lr.numbers[j].word)
			}
			return lr.numbers[i].word < lr.numbers[j].word
		})
		lr.words = map[string]wordInfo{}
		for _, nw := range lr.numbers {
			k := firstKey(nw.word)
			wi := lr.words[k]
			wi.numbers = append(wi.numbers, nw)
			lr.words[k] = wi
		}
		for _, m := range []map[string]bool{lr.stop, lr.articles} {
			for w := range m {
				wi := lr.words[w]
				wi.dropped = true
				lr.words[w] = wi
			}
		}
		for _, l := range []*[]string{&lr.Negation, &lr.ClauseBreaks, &lr.Reject, &lr.Accept, &lr.Hedge,
			&lr.Observation, &lr.Inference, &lr.Evidence, &lr.Missing, &lr.Acknowledge, &lr.Clarify,
			&lr.Redundancy, &lr.Specific, &lr.Copula} {
			for i, w := range *l {
				(*l)[i] = foldText(w)
			}
		}
	}
	r.synonym = map[string]string{}
	for _, g := range r.Synonyms {
		if len(g) == 0 {
			continue
		}
		head := stem(foldText(g[0]))
		for _, w := range g {
			f := foldText(w)
			if !chars.HasCJK(f) {
				r.synonym[stem(f)] = head
			}
		}
	}
	r.values = r.values[:0]
	for class, vals := range r.Values {
		for v, spellings := range vals {
			for _, s := range spellings {
				f := foldText(s)
				r.values = append(r.values, valueWord{spelling: f, class: class, value: v, cjk: chars.HasCJK(f)})
			}
		}
	}
	r.objects = r.objects[:0]
	for name, spellings := range r.Objects {
		for _, s := range spellings {
			f := foldText(s)
			r.objects = append(r.objects, valueWord{spelling: f, class: "object", value: name, cjk: chars.HasCJK(f)})
		}
	}
	for i, w := range r.ObjectStop {
		r.ObjectStop[i] = foldText(w)
	}
	for l, cues := range r.PartCues {
		for i, w := range cues {
			r.PartCues[l][i] = foldText(w)
		}
	}
	longestFirst(r.values)
	longestFirst(r.objects)
	for l, lr := range r.Lang {
		r.buildIndex(l, lr)
	}
}

// lang returns the word lists of a language, English for any unknown one.
func (r *Rules) lang(l string) *LangRules {
	if lr, ok := r.Lang[l]; ok {
		return lr
	}
	return r.Lang["en"]
}

// longestFirst orders spellings so that the longest match wins ("traffic light" before
// "light"), then alphabetically, so the order never depends on map iteration.
func longestFirst(ws []valueWord) {
	sort.Slice(ws, func(i, j int) bool {
		a, b := ws[i], ws[j]
		if len(a.spelling) != len(b.spelling) {
			return len(a.spelling) > len(b.spelling)
		}
		if a.spelling != b.spelling {
			return a.spelling < b.spelling
		}
		return a.value < b.value
	})
}
