package agree

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Builder collects labelled ratings (item, rater, field, value strings) and automatic scores
// into [FieldData]. It applies the oracle's input rules: values are trimmed; "" and "NA" are
// missing (NA is a category of nominal fields with NACategory); a rater who gave only
// missing values in a field is listed apart; items, raters and fields keep the order of
// their first appearance; a duplicate non-missing rating is an error; without a declared
// schema a field whose values are all integers is ordinal 1..5 (or min..max when values fall
// outside 1..5) and any other field is nominal with its sorted distinct values.
//
// Memory is 12 bytes per rating plus the item ids, so millions of rows are fine. Add all
// ratings before any score.
type Builder struct {
	// NACategory keeps "NA" as an ordinary value of nominal fields.
	NACategory bool
	// Missing lists further values (exact, after trimming) that mean "no rating", such as
	// "NULL" or "-", in ratings and scores alike.
	Missing []string
	// Grouped promises that all ratings of an item come together, one run per item (as the
	// store passes m3eval score's rows, in queue order): Add then takes an item other than
	// the last one as new without looking it up, and the map of item ids is made only when
	// AddScore needs it. At a million items the map's look-ups and growth were a second of
	// the read. A caller that breaks the promise gets an item listed twice.
	Grouped bool

	schema map[string]Field
	fields []*fieldAcc
	byName map[string]*fieldAcc
	items  map[string]int32
	names  []string
	// indexed: items maps every name (always, unless Grouped has left it to AddScore).
	indexed bool
	judges  []string

	// Long-form files list the ratings of an item (and of a field) together, so the last
	// lookups are remembered: most rows then skip the map of item ids.
	lastItem  string
	lastGI    int32
	lastField *fieldAcc
	// Score files usually list items in the order of the ratings: the item after the last
	// scored one is tried before the map.
	scoreGI int32
}

type cell struct {
	item  int32
	rater uint16
	code  uint8
	line  uint32
}

type fieldAcc struct {
	name     string
	declared bool
	field    Field
	// raw interns the distinct value strings of an undeclared field; codes are provisional
	// until Build infers the categories.
	raw      map[string]uint8
	rawNames []string
	rawCount []int // ratings of each raw value
	// nums holds each cell's number (NaN when not one) for a continuous field, and for an
	// undeclared field once it has more distinct values than categories can hold
	// (overflow): it is then continuous if every value is a number.
	nums     []float64
	overflow bool
	nonNum   Location // the first value that is not a number, for the error

	allRaters map[string]int // every rater seen, in order
	allOrder  []string
	rated     []bool // by allRaters index: gave a non-missing value
	raterCol  []int  // by allRaters index: column in the matrix, −1 until rated
	raters    []string

	local []int32 // by global item: 1 + row in the matrix, 0 when not rated in this field
	items []int32 // rows: global item ids

	cells []cell
	auto  map[string]*autoAcc // by judge
}

// autoAcc holds one judge's raw scores of a field by matrix row ("" = none yet).
type autoAcc struct {
	vals  []string
	lines []uint32
}

// Location formats an error position as "file:line: column: ". Line 0 omits the line.
type Location struct {
	File   string
	Line   int
	Column string
}

func (l Location) errorf(format string, args ...any) error {
	var b strings.Builder
	if l.File != "" {
		b.WriteString(l.File)
		if l.Line > 0 {
			b.WriteString(":" + strconv.Itoa(l.Line))
		}
		b.WriteString(": ")
	}
	if l.Column != "" {
		b.WriteString(l.Column + ": ")
	}
	return inputError(b.String() + fmt.Sprintf(format, args...))
}

// inputError is an error in the input data; errors.Is(err, ErrInput) holds for it.
type inputError string

// Error implements error.
func (e inputError) Error() string { return string(e) }

// Is makes errors.Is(err, ErrInput) hold.
func (e inputError) Is(target error) bool { return target == ErrInput }

// NewBuilder returns a Builder. schema declares the types and categories of some or all
// fields; a nil schema infers every field.
func NewBuilder(schema []Field) (*Builder, error) {
	b := &Builder{schema: map[string]Field{}, byName: map[string]*fieldAcc{}, items: map[string]int32{}}
	for _, f := range schema {
		if err := f.Validate(); err != nil {
			return nil, err
		}
		b.schema[f.Name] = f
	}
	return b, nil
}

// SizeHint tells the Builder about how many distinct items to expect. The map of item ids is
// then allocated once instead of being rehashed as it grows, a large share of the time on
// files with millions of rows. Call it before Add.
func (b *Builder) SizeHint(items int) {
	if len(b.items) == 0 && items > 0 {
		b.items = make(map[string]int32, items)
		b.names = make([]string, 0, items)
	}
}

// Add records one rating. loc is used in error messages only.
func (b *Builder) Add(item, rater, field, value string, loc Location) error {
	item, rater, field, value = strings.TrimSpace(item), strings.TrimSpace(rater), strings.TrimSpace(field), strings.TrimSpace(value)
	f := b.lastField
	if f == nil || f.name != field {
		f = b.byName[field]
	}
	if f == nil {
		f = &fieldAcc{name: field, raw: map[string]uint8{}, allRaters: map[string]int{}, auto: map[string]*autoAcc{}}
		if d, ok := b.schema[field]; ok {
			f.declared, f.field = true, d
		}
		b.byName[field] = f
		b.fields = append(b.fields, f)
	}
	b.lastField = f
	ri, ok := f.allRaters[rater]
	if !ok {
		ri = len(f.allOrder)
		f.allRaters[rater] = ri
		f.allOrder = append(f.allOrder, rater)
		f.rated = append(f.rated, false)
		f.raterCol = append(f.raterCol, -1)
	}
	missing := IsMissing(value, b.NACategory) || slices.Contains(b.Missing, value)
	if !missing && value == "NA" && (f.declared && f.field.Type == Ordinal) {
		// NA stays missing in ordinal fields: --na-category is for Yes/No/NA fields.
		missing = true
	}
	if missing {
		return nil
	}
	var code uint8
	if f.declared && f.field.Type == Continuous {
		x, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			loc.Column = "value"
			return loc.errorf("%q is not a number (field %s is continuous)", value, field)
		}
		f.nums = append(f.nums, x)
	} else if f.declared {
		c, ok := f.field.Code(value)
		if !ok {
			loc.Column = "value"
			return loc.errorf("%q is not a category of %s (%s)", value, field, f.field.describe())
		}
		code = c
	} else {
		c, ok := f.raw[value]
		if !ok && !f.overflow {
			if len(f.rawNames) >= MaxCategories-1 {
				// Too many values for categories: the field can only be continuous. The
				// numbers are kept from here on, those of the earlier cells recovered from
				// their interned strings (no field pays for them before).
				f.overflow = true
				f.nums = make([]float64, len(f.cells), 2*len(f.cells)+1)
				for i, cl := range f.cells {
					f.nums[i] = f.number(f.rawNames[cl.code], Location{File: loc.File, Line: int(cl.line)})
				}
			} else {
				c = uint8(len(f.rawNames))
				f.raw[value] = c
				f.rawNames = append(f.rawNames, value)
				f.rawCount = append(f.rawCount, 0)
			}
		}
		if f.overflow {
			f.nums = append(f.nums, f.number(value, loc))
		} else {
			f.rawCount[c]++
		}
		code = c
	}
	if !f.rated[ri] {
		if len(f.raters) >= 1<<16-1 {
			loc.Column = "rater"
			return loc.errorf("more than %d raters in field %s", 1<<16-1, field)
		}
		f.rated[ri] = true
		f.raterCol[ri] = len(f.raters)
		f.raters = append(f.raters, rater)
	}
	gi, ok := b.lastGI, item == b.lastItem && len(b.names) > 0
	if !ok && !b.Grouped {
		gi, ok = b.items[item]
	}
	if !ok {
		gi = int32(len(b.names))
		if !b.Grouped || b.indexed {
			b.items[item] = gi
		}
		b.names = append(b.names, item)
	}
	b.lastItem, b.lastGI = item, gi
	for int(gi) >= len(f.local) {
		f.local = append(f.local, 0)
	}
	if f.local[gi] == 0 {
		f.items = append(f.items, gi)
		f.local[gi] = int32(len(f.items))
	}
	f.cells = append(f.cells, cell{item: f.local[gi] - 1, rater: uint16(f.raterCol[ri]), code: code, line: uint32(loc.Line)})
	return nil
}

// number parses a value of an undeclared field that turned continuous; a value that is not a
// number gives NaN, and the first one's place is kept for the error Build reports.
func (f *fieldAcc) number(value string, loc Location) float64 {
	x, err := strconv.ParseFloat(value, 64)
	if err == nil && !math.IsInf(x, 0) && !math.IsNaN(x) {
		return x
	}
	if f.nonNum.File == "" && f.nonNum.Line == 0 {
		f.nonNum = loc
		f.nonNum.Column = "value"
	}
	return math.NaN()
}

// index makes the map of item ids that Grouped left out, at its final size.
func (b *Builder) index() {
	b.items = make(map[string]int32, len(b.names))
	for i, name := range b.names {
		b.items[name] = int32(i)
	}
	b.indexed = true
}

// AddJudge declares an automatic judge, so that every field reports it even when it scored
// nothing there. AddScore declares judges implicitly.
func (b *Builder) AddJudge(judge string) {
	if !slices.Contains(b.judges, judge) {
		b.judges = append(b.judges, judge)
	}
}

// AddScore records judge's automatic score for an item and field. Scores of items or fields
// without ratings are ignored, like the oracle does; "" and "NA" are missing.
func (b *Builder) AddScore(judge, item, field, value string, loc Location) error {
	item, field, value = strings.TrimSpace(item), strings.TrimSpace(field), strings.TrimSpace(value)
	if IsMissing(value, false) || slices.Contains(b.Missing, value) {
		return nil
	}
	if len(b.judges) == 0 || b.judges[len(b.judges)-1] != judge {
		b.AddJudge(judge)
	}
	f := b.lastField
	if f == nil || f.name != field {
		f = b.byName[field]
	}
	if f == nil {
		return nil
	}
	b.lastField = f
	var gi int32
	var ok bool
	switch n := b.scoreGI + 1; {
	case int(n) < len(b.names) && b.names[n] == item:
		gi, ok = n, true
	case int(b.scoreGI) < len(b.names) && b.names[b.scoreGI] == item:
		gi, ok = b.scoreGI, true
	default:
		if b.Grouped && !b.indexed {
			b.index()
		}
		gi, ok = b.items[item]
	}
	if !ok || int(gi) >= len(f.local) || f.local[gi] == 0 {
		return nil
	}
	b.scoreGI = gi
	a := f.auto[judge]
	if a == nil {
		a = &autoAcc{vals: make([]string, len(f.items)), lines: make([]uint32, len(f.items))}
		f.auto[judge] = a
	}
	row := f.local[gi] - 1
	if a.vals[row] != "" {
		loc.Column = "item"
		return loc.errorf("duplicate score for item %q, field %s (first on line %d)", item, field, a.lines[row])
	}
	a.vals[row] = value
	a.lines[row] = uint32(loc.Line)
	return nil
}

// missingLooking are values that usually mean "no rating" in exported data sets.
var missingLooking = []string{"NULL", "null", "N/A", "n/a", "NaN", "nan", "None", "-", "?"}

// Warnings lists the values that look like missing codes but were read as categories, with
// their counts, for every field without a schema entry. Such values are NULL, N/A, NaN, -
// and ?. One silently becomes a category and changes every coefficient; declare them with
// Missing.
func (b *Builder) Warnings() []string {
	var out []string
	for _, f := range b.fields {
		if f.declared {
			continue
		}
		for code, s := range f.rawNames {
			if !slices.Contains(missingLooking, s) {
				continue
			}
			n := f.rawCount[code]
			out = append(out, fmt.Sprintf("field %s: %d values %q look like a missing code but count as a category (declare it missing with --missing %s)", f.name, n, s, s))
		}
	}
	return out
}

// inferField applies the oracle's rule for a field without a schema entry.
func inferField(name string, raw []string) Field {
	if len(raw) == 0 {
		return NewNominal(name)
	}
	ints := make([]int64, len(raw))
	all := true
	for i, s := range raw {
		v, ok := ParseInt(s)
		if !ok {
			all = false
			break
		}
		ints[i] = v
	}
	if all {
		lo, hi := slices.Min(ints), slices.Max(ints)
		if lo >= 1 && hi <= 5 {
			lo, hi = 1, 5
		}
		if hi-lo < MaxCategories-1 {
			var vals []int64
			for v := lo; v <= hi; v++ {
				vals = append(vals, v)
			}
			return NewOrdinal(name, vals...)
		}
	}
	labels := slices.Clone(raw)
	slices.Sort(labels)
	return NewNominal(name, labels...)
}

// Build returns the fields in order of first appearance. file names the ratings source in
// error messages.
func (b *Builder) Build(file string) ([]FieldData, error) {
	out := make([]FieldData, 0, len(b.fields))
	for _, f := range b.fields {
		fd := f.field
		remap := []uint8(nil)
		if !f.declared && f.overflow {
			if f.nonNum.Line > 0 || f.nonNum.File != "" {
				return nil, f.nonNum.errorf("field %s has more than %d distinct values and this one is not a number; declare the field in a schema", f.name, MaxCategories-1)
			}
			fd = NewContinuous(f.name)
		} else if !f.declared {
			fd = inferField(f.name, f.rawNames)
			remap = make([]uint8, len(f.rawNames))
			for i, s := range f.rawNames {
				c, ok := fd.Code(s)
				if !ok {
					return nil, Location{File: file}.errorf("field %s: value %q has no category", f.name, s)
				}
				remap[i] = c
			}
		}
		m := NewMatrix(len(f.items), len(f.raters))
		var cont []float64
		if fd.Type == Continuous {
			cont = make([]float64, len(f.items)*len(f.raters))
			for i := range cont {
				cont[i] = math.NaN()
			}
		}
		for ci, c := range f.cells {
			if cont != nil {
				at := int(c.item)*m.Raters + int(c.rater)
				if !math.IsNaN(cont[at]) {
					loc := Location{File: file, Line: int(c.line), Column: "item"}
					return nil, loc.errorf("duplicate rating of item %q by %s in field %s", b.names[f.items[c.item]], f.raters[c.rater], f.name)
				}
				cont[at] = f.nums[ci]
				continue
			}
			code := c.code
			if remap != nil {
				code = remap[code]
			}
			at := int(c.item)*m.Raters + int(c.rater)
			if m.Codes[at] != Missing {
				first := 0
				for _, o := range f.cells {
					if o.item == c.item && o.rater == c.rater {
						first = int(o.line)
						break
					}
				}
				loc := Location{File: file, Line: int(c.line), Column: "item"}
				return nil, loc.errorf("duplicate rating of item %q by %s in field %s (first on line %d)",
					b.names[f.items[c.item]], f.raters[c.rater], f.name, first)
			}
			m.Codes[at] = code
		}
		d := FieldData{Field: fd, Raters: f.raters, Ratings: m, Cont: cont}
		d.Items = make([]string, len(f.items))
		for i, gi := range f.items {
			d.Items[i] = b.names[gi]
		}
		for ri, r := range f.allOrder {
			if !f.rated[ri] {
				d.RatersWithoutRatings = append(d.RatersWithoutRatings, r)
			}
		}
		if d.Raters == nil {
			d.Raters = []string{}
		}
		for _, judge := range b.judges {
			j := NewJudge(judge, len(f.items))
			if a := f.auto[judge]; a != nil {
				for row, s := range a.vals {
					if s != "" {
						j.SetString(fd, row, s)
					}
				}
			}
			d.Judges = append(d.Judges, j)
		}
		out = append(out, d)
		f.cells, f.nums = nil, nil // the matrix holds them now
	}
	return out, nil
}
