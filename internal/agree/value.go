package agree

import (
	"fmt"
	"math"
)

// Value is a statistic that is either a finite number or undefined with a reason. The zero
// Value is undefined, so a forgotten assignment never shows up as a 0.
type Value struct {
	v      float64
	ok     bool
	reason string
}

// Num returns a defined Value. A NaN or infinite x gives an undefined Value, because the
// callers compute ratios and a non-finite result means the ratio had no meaning.
func Num(x float64) Value {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return Undefined("0/0")
	}
	return Value{v: x, ok: true}
}

// Undefined returns an undefined Value carrying why it could not be computed.
func Undefined(reason string) Value {
	if reason == "" {
		reason = "undefined"
	}
	return Value{reason: reason}
}

// OK reports whether the Value is a number.
func (v Value) OK() bool { return v.ok }

// Float returns the number and whether it is defined.
func (v Value) Float() (float64, bool) { return v.v, v.ok }

// Reason returns why the Value is undefined, or "" when it is defined.
func (v Value) Reason() string {
	if v.ok {
		return ""
	}
	if v.reason == "" {
		return "undefined"
	}
	return v.reason
}

// String implements fmt.Stringer.
func (v Value) String() string {
	if !v.ok {
		return "undefined (" + v.Reason() + ")"
	}
	return fmt.Sprint(v.v)
}

// ratio returns num/den, or an undefined Value with reason when den is 0. The oracle's
// threshold (1e-300) is kept so that both treat the same denominators as zero.
func ratio(num, den float64, reason string) Value {
	if math.Abs(den) < 1e-300 {
		return Undefined(reason)
	}
	return Num(num / den)
}
