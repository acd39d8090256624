package answer

import (
	"reflect"
	"testing"
)

// FuzzRead: any text reads without a panic, every claim's offset lies in the folded text, and
// the quick looks agree with Read where they promise to (Salad always; a text that is not
// Valued makes no claim), and Glance with the looks it gathers. Fold is idempotent, and a text
// reads as its folded form does (the judge hands the reader texts it folded already).
func FuzzRead(f *testing.F) {
	for _, s := range []string{"", "???", "。。。", "   ", "The umbrella is black. Just kidding, it is red.", "伞是黑色的，不对，我说错了，伞是红色的。",
		"dog grass tree lies under the on", "Image 2 第二张图 图3 the last image", "three, four or five apples", "'s 's", "第", "图", "最后一",
		"5月12日 3.5 10% ten past three", "Ｔｈｅ　ｃｕｐ", "it it it is is", "the the the on", "No, the umbrella is not red, it might be black or red, but it is blue."} {
		f.Add(s)
	}
	rd := NewReader(Scope{Images: 3, Image: 1, Objects: vocab.Objects, Stop: []string{"咖啡馆"}})
	f.Fuzz(func(t *testing.T, s string) {
		r := rd.Read(s)
		for _, c := range r.Claims {
			if c.At < 0 || c.At > len(r.Folded) {
				t.Fatalf("%q: claim at %d outside %d bytes", s, c.At, len(r.Folded))
			}
		}
		if rd.Salad(s) != r.Salad {
			t.Fatalf("%q: Salad %v, Read %v", s, rd.Salad(s), r.Salad)
		}
		if g := rd.Glance(s); g.Plain != rd.Plain(s) || g.Denies != rd.Denies(s) || r.Salad && !g.MaybeSalad {
			t.Fatalf("%q: Glance %+v, Plain %v, Denies %v, Salad %v", s, g, rd.Plain(s), rd.Denies(s), r.Salad)
		}
		if f := Fold(s); Fold(f) != f {
			t.Fatalf("%q: Fold %q, folded again %q", s, f, Fold(f))
		} else if rf := rd.Read(f); !reflect.DeepEqual(rf, r) || rd.Glance(f) != rd.Glance(s) || rd.Valued(f) != rd.Valued(s) {
			t.Fatalf("%q: read folded %+v, read %+v", s, rf, r)
		}
		if !rd.Valued(s) && len(r.Claims) > 0 {
			t.Fatalf("%q: not Valued, but claims %+v", s, r.Claims)
		}
	})
}
