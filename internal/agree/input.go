package agree

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Missing is the code of an absent rating in a [Matrix].
const Missing uint8 = 0xFF

// MaxCategories is the largest number of categories a field may have: codes are bytes and
// [Missing] takes the last one.
const MaxCategories = 255

// Type is the measurement level of a field.
type Type int

// The field types. Ordinal fields have integer category values and get the weighted and
// correlational statistics; nominal fields only the unweighted ones.
const (
	Nominal Type = iota
	Ordinal
	// Continuous fields hold any numbers, such as an aggregated mean faithfulness score.
	// They get the correlations with the judges and the ICC, not the categorical statistics.
	Continuous
)

// String returns "nominal", "ordinal" or "continuous", the words of the schema file.
func (t Type) String() string {
	switch t {
	case Ordinal:
		return "ordinal"
	case Continuous:
		return "continuous"
	}
	return "nominal"
}

// NewContinuous returns a continuous field.
func NewContinuous(name string) Field { return Field{Name: name, Type: Continuous} }

// Field describes one rubric field: its name, type and declared categories.
type Field struct {
	Name string
	Type Type
	// Categories are the labels in declared order; a code is an index into it.
	Categories []string
	// Values are the integer values of the categories of an ordinal field (same order as
	// Categories); weights and distances are spaced by them. Nil for nominal fields.
	Values []int64
}

// NewOrdinal returns an ordinal field whose categories are the given integer values.
func NewOrdinal(name string, values ...int64) Field {
	f := Field{Name: name, Type: Ordinal, Values: append([]int64(nil), values...)}
	for _, v := range values {
		f.Categories = append(f.Categories, strconv.FormatInt(v, 10))
	}
	return f
}

// NewNominal returns a nominal field with the given category labels.
func NewNominal(name string, labels ...string) Field {
	return Field{Name: name, Type: Nominal, Categories: append([]string(nil), labels...)}
}

// Validate checks that the field can be analysed: 1..MaxCategories distinct categories and,
// for an ordinal field, one integer value per category.
func (f Field) Validate() error {
	if f.Type == Continuous {
		if len(f.Categories) > 0 {
			return fmt.Errorf("field %s: a continuous field has no categories", f.Name)
		}
		return nil
	}
	if len(f.Categories) > MaxCategories-1 {
		return fmt.Errorf("field %s: %d categories; at most %d are supported", f.Name, len(f.Categories), MaxCategories-1)
	}
	seen := make(map[string]bool, len(f.Categories))
	for _, c := range f.Categories {
		if seen[c] {
			return fmt.Errorf("field %s: category %q is declared twice", f.Name, c)
		}
		seen[c] = true
	}
	if f.Type == Ordinal {
		if len(f.Values) != len(f.Categories) {
			return fmt.Errorf("field %s: ordinal field needs one integer value per category", f.Name)
		}
		vs := make(map[int64]bool, len(f.Values))
		for _, v := range f.Values {
			if vs[v] {
				return fmt.Errorf("field %s: category value %d is declared twice", f.Name, v)
			}
			vs[v] = true
		}
	}
	return nil
}

// Code returns the category code of a (trimmed) value string, as the oracle reads it. An
// ordinal value is any number equal to an integer category value ("4", "4.0"); a nominal
// value must equal a label exactly (case-sensitive).
func (f Field) Code(s string) (uint8, bool) {
	if f.Type == Ordinal {
		v, ok := ParseInt(s)
		if !ok {
			return Missing, false
		}
		for i, c := range f.Values {
			if c == v {
				return uint8(i), true
			}
		}
		return Missing, false
	}
	for i, c := range f.Categories {
		if c == s {
			return uint8(i), true
		}
	}
	return Missing, false
}

// describe returns the categories for an error message: "1..5" or "No, Yes".
func (f Field) describe() string {
	if f.Type == Ordinal && len(f.Values) > 1 {
		contiguous := true
		for i := 1; i < len(f.Values); i++ {
			if f.Values[i] != f.Values[i-1]+1 {
				contiguous = false
			}
		}
		if contiguous {
			return fmt.Sprintf("%d..%d", f.Values[0], f.Values[len(f.Values)-1])
		}
	}
	return strings.Join(f.Categories, ", ")
}

// ParseInt parses a number that is an exact integer ("4", "4.0", "4e0"), like the oracle's
// parse_int.
func ParseInt(s string) (int64, bool) {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(x, 0) || math.IsNaN(x) || x != math.Trunc(x) || math.Abs(x) > 1<<53 {
		return 0, false
	}
	return int64(x), true
}

// Matrix holds the ratings of one field as Items × Raters category codes. It is row-major
// (one row per item), with Missing where a rater did not rate an item.
type Matrix struct {
	Items, Raters int
	Codes         []uint8
}

// NewMatrix returns an items × raters matrix with every cell Missing.
func NewMatrix(items, raters int) Matrix {
	c := make([]uint8, items*raters)
	for i := range c {
		c[i] = Missing
	}
	return Matrix{Items: items, Raters: raters, Codes: c}
}

// Set stores the code of rater r for item i.
func (m Matrix) Set(i, r int, code uint8) { m.Codes[i*m.Raters+r] = code }

// At returns the code of rater r for item i.
func (m Matrix) At(i, r int) uint8 { return m.Codes[i*m.Raters+r] }

func (m Matrix) check(k int) error {
	if m.Items < 0 || m.Raters < 0 || len(m.Codes) != m.Items*m.Raters {
		return fmt.Errorf("matrix is %d × %d but holds %d cells", m.Items, m.Raters, len(m.Codes))
	}
	for _, c := range m.Codes {
		if c != Missing && int(c) >= k {
			return fmt.Errorf("code %d is not a category (the field has %d)", c, k)
		}
	}
	return nil
}

// Judge holds one automatic judge's scores for the items of a field, aligned with the rows
// of the field's Matrix.
type Judge struct {
	Name string
	// Present says whether the judge scored the item (a missing score is not present).
	Present []bool
	// Num is the numeric score used by the correlations; NaN when absent or not a number.
	Num []float64
	// Code is the score as a category of the field, or Missing when it is not one (3.7 on a
	// 1..5 scale); used by exact-match accuracy and the kappas.
	Code []uint8
}

// NewJudge returns a Judge for n items with no score yet.
func NewJudge(name string, n int) Judge {
	j := Judge{Name: name, Present: make([]bool, n), Num: make([]float64, n), Code: make([]uint8, n)}
	for i := range j.Num {
		j.Num[i] = math.NaN()
		j.Code[i] = Missing
	}
	return j
}

// SetString records the judge's score for item i from its text, read as the oracle does. The
// number (if it is one) serves the correlations, and the category (if it is one) the labels.
// A missing value ("" or "NA") leaves the item unscored.
func (j Judge) SetString(f Field, i int, s string) {
	s = strings.TrimSpace(s)
	if IsMissing(s, false) {
		return
	}
	j.Present[i] = true
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
		j.Code[i], _ = f.Code(s) // a nominal label, or not a category
		return
	}
	j.Num[i] = x
	if f.Type != Ordinal {
		j.Code[i], _ = f.Code(s)
		return
	}
	if x == math.Trunc(x) && math.Abs(x) <= 1<<53 {
		for c, v := range f.Values {
			if float64(v) == x {
				j.Code[i] = uint8(c)
			}
		}
	}
}

// IsMissing reports whether a trimmed value is missing: empty, or "NA" unless naCategory.
func IsMissing(s string, naCategory bool) bool {
	return s == "" || (s == "NA" && !naCategory)
}

// FieldData is everything needed to analyse one field.
type FieldData struct {
	Field  Field
	Items  []string // item ids, one per matrix row
	Raters []string // rater ids, one per matrix column
	// RatersWithoutRatings are raters who appear only with missing values (reported, not
	// used).
	RatersWithoutRatings []string
	Ratings              Matrix
	// Cont holds the values of a continuous field, items × raters row-major, NaN where a
	// rater gave none (Ratings is then all Missing, of the same shape).
	Cont   []float64
	Judges []Judge
}

// Validate checks the shapes and codes of the field's data.
func (d *FieldData) Validate() error {
	if err := d.Field.Validate(); err != nil {
		return err
	}
	if d.Ratings.Items != len(d.Items) || d.Ratings.Raters != len(d.Raters) {
		return fmt.Errorf("field %s: matrix is %d × %d for %d items and %d raters", d.Field.Name,
			d.Ratings.Items, d.Ratings.Raters, len(d.Items), len(d.Raters))
	}
	if d.Field.Type == Continuous && len(d.Cont) != len(d.Items)*len(d.Raters) {
		return fmt.Errorf("field %s: %d continuous values for %d items × %d raters", d.Field.Name, len(d.Cont), len(d.Items), len(d.Raters))
	}
	if err := d.Ratings.check(len(d.Field.Categories)); err != nil {
		return fmt.Errorf("field %s: %w", d.Field.Name, err)
	}
	for _, j := range d.Judges {
		n := len(d.Items)
		if len(j.Present) != n || len(j.Num) != n || len(j.Code) != n {
			return fmt.Errorf("field %s: judge %s has scores for %d items, the field has %d", d.Field.Name, j.Name, len(j.Present), n)
		}
	}
	return nil
}

// ErrInput marks invalid input data (a value outside the categories, a duplicate rating).
var ErrInput = errors.New("invalid input")
