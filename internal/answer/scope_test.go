package answer

import (
	"reflect"
	"testing"
)

// TestScopeKeyHoldsEveryField changes each field of a scope (and of its objects) in turn:
// each change must change the key, or a cache keyed by it would hand out a reader compiled
// for another scope. A field added to Scope or Object without a case here fails the test.
func TestScopeKeyHoldsEveryField(t *testing.T) {
	base := func() Scope {
		return Scope{Language: English, Images: 2, Image: 1, Stop: []string{"停车场"},
			Objects: []Object{{ID: "cup", Image: 1, Names: []string{"cup"}, Attributes: map[string]string{"color": "green"}}},
			Values:  map[string][]string{"color": {"teal"}}}
	}
	changes := map[string]func(*Scope){
		"Language":     func(s *Scope) { s.Language = Chinese },
		"Objects":      func(s *Scope) { s.Objects = append(s.Objects, Object{ID: "car"}) },
		"Values":       func(s *Scope) { s.Values["color"] = []string{"cyan"} },
		"Images":       func(s *Scope) { s.Images = 3 },
		"Image":        func(s *Scope) { s.Image = 2 },
		"Stop":         func(s *Scope) { s.Stop = nil },
		"ID":           func(s *Scope) { s.Objects[0].ID = "mug" },
		"Object.Image": func(s *Scope) { s.Objects[0].Image = 2 },
		"Names":        func(s *Scope) { s.Objects[0].Names = []string{"cup", "mug"} },
		"Attributes":   func(s *Scope) { s.Objects[0].Attributes["color"] = "red" },
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[Scope](), reflect.TypeFor[Object]()} {
		for f := range typ.Fields() {
			name := f.Name
			if typ == reflect.TypeFor[Object]() && name == "Image" {
				name = "Object.Image"
			}
			if changes[name] == nil {
				t.Errorf("%s.%s: no case here; put the field in Scope.Key and add one", typ.Name(), f.Name)
			}
		}
	}
	want := base().Key()
	if base().Key() != want {
		t.Fatal("equal scopes, different keys")
	}
	for name, change := range changes {
		s := base()
		change(&s)
		if s.Key() == want {
			t.Errorf("changing %s leaves the key as it was", name)
		}
	}
	// A separator inside a name does not make two scopes meet.
	a, b := base(), base()
	a.Objects[0].ID, a.Objects[0].Names = "cup@1", nil
	b.Objects[0].Names = nil
	b.Objects[0].Image = 0
	if a.Key() == b.Key() {
		t.Error("object ids with separators collide")
	}
}
