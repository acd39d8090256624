package vistrajqa

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaDoc is the schema file as plain JSON, for walking its definitions.
type schemaDoc struct {
	Defs map[string]schemaDef `json:"$defs"`
}

type schemaDef struct {
	Description string                `json:"description"`
	Required    []string              `json:"required"`
	Properties  map[string]schemaProp `json:"properties"`
	Then        *schemaDef            `json:"then"`
}

type schemaProp struct {
	Type        any         `json:"type"`
	Enum        []any       `json:"enum"`
	MinLength   *int        `json:"minLength"`
	Minimum     *float64    `json:"minimum"`
	MinItems    *int        `json:"minItems"`
	Ref         string      `json:"$ref"`
	Items       *schemaProp `json:"items"`
	Description string      `json:"description"`
}

func loadSchemaDoc(t testing.TB) schemaDoc {
	t.Helper()
	var d schemaDoc
	if err := json.Unmarshal(SchemaJSON, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// wireTypes pairs each schema definition with the reader's Go type for it.
var wireTypes = map[string]reflect.Type{
	"trajectory":   reflect.TypeFor[wireTrajectory](),
	"step":         reflect.TypeFor[wireStep](),
	"probe":        reflect.TypeFor[wireProbe](),
	"qa_item":      reflect.TypeFor[wireQA](),
	"memory_point": reflect.TypeFor[wireMemoryPoint](),
}

// TestSchemaMatchesWireTypes: every property of the schema is a field the reader decodes and
// the other way round, and the schema's required keys are exactly the reader's pointer fields
// (the ones it reports as missing).
func TestSchemaMatchesWireTypes(t *testing.T) {
	doc := loadSchemaDoc(t)
	if len(doc.Defs) != len(wireTypes) {
		t.Fatalf("schema has %d definitions, reader %d", len(doc.Defs), len(wireTypes))
	}
	for name, def := range doc.Defs {
		wt, ok := wireTypes[name]
		if !ok {
			t.Errorf("schema definition %s has no reader type", name)
			continue
		}
		var fields, required []string
		for i := range wt.NumField() {
			f := wt.Field(i)
			tag := strings.Split(f.Tag.Get("json"), ",")[0]
			fields = append(fields, tag)
			if f.Type.Kind() == reflect.Pointer {
				required = append(required, tag)
			}
		}
		props := slices.Sorted(maps.Keys(def.Properties))
		sort.Strings(fields)
		sort.Strings(required)
		schemaReq := slices.Clone(def.Required)
		sort.Strings(schemaReq)
		if !slices.Equal(fields, props) {
			t.Errorf("%s: reader fields %v, schema properties %v", name, fields, props)
		}
		if !slices.Equal(required, schemaReq) {
			t.Errorf("%s: reader requires %v, schema requires %v", name, required, schemaReq)
		}
	}
}

// TestSchemaAgreement mutates a valid record at every property of every definition (delete,
// null, wrong type, below minimum/minLength/minItems, outside the enum, the is_update
// condition) and checks that the JSON Schema and the reader's structural checks accept and
// reject the same records, the reader naming the mutated field.
func TestSchemaAgreement(t *testing.T) {
	sch, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	doc := loadSchemaDoc(t)
	line := firstLine(t, "testdata/in/sessions-vab.jsonl")
	check := func(desc, path string, rec any) {
		t.Helper()
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		schemaErr := sch.Validate(inst)
		_, gotPath, msg := decodeRecord(b)
		switch {
		case schemaErr == nil && msg != "":
			t.Errorf("%s: schema accepts, reader rejects: %s: %s", desc, gotPath, msg)
		case schemaErr != nil && msg == "":
			t.Errorf("%s: schema rejects (%v), reader accepts", desc, schemaErr)
		case msg != "" && !blames(gotPath, path):
			t.Errorf("%s: reader blames %s (%s), want %s", desc, gotPath, msg, path)
		}
	}
	var rec map[string]any
	fresh := func() {
		rec = nil
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
	}
	fresh()
	check("unchanged", "", rec)

	n := 0
	// visit calls f for each object of definition def in the record, with its path; only the
	// first and last element of each array, which is enough to meet every case once.
	var visit func(def string, obj map[string]any, path string, f func(def string, obj map[string]any, path string))
	visit = func(def string, obj map[string]any, path string, f func(string, map[string]any, string)) {
		f(def, obj, path)
		for name, p := range doc.Defs[def].Properties {
			ref := p.Ref
			if p.Items != nil {
				ref = p.Items.Ref
			}
			if ref == "" {
				continue
			}
			sub := strings.TrimPrefix(ref, "#/$defs/")
			child := join(path, name)
			switch v := obj[name].(type) {
			case map[string]any:
				visit(sub, v, child, f)
			case []any:
				for _, i := range uniq(0, len(v)-1) {
					if m, ok := v[i].(map[string]any); ok {
						visit(sub, m, fmt.Sprintf("%s[%d]", child, i), f)
					}
				}
			}
		}
	}
	// The mutations are computed on a fresh copy each time: list them by path first.
	type site struct {
		def, path string
		locate    func(map[string]any) map[string]any
	}
	var sites []site
	visit("trajectory", rec, "", func(def string, _ map[string]any, path string) {
		sites = append(sites, site{def: def, path: path, locate: func(root map[string]any) map[string]any { return lookup(root, path) }})
	})
	for _, s := range sites {
		def := doc.Defs[s.def]
		for name, p := range def.Properties {
			at := join(s.path, name)
			for _, m := range propMutations(p) {
				fresh()
				obj := s.locate(rec)
				if m.value == deleteMarker {
					delete(obj, name)
				} else {
					obj[name] = m.value
				}
				check(fmt.Sprintf("%s: %s", at, m.desc), at+m.pathSuffix, rec)
				n++
			}
			if p.Items != nil && p.Items.Ref == "" {
				// Arrays of strings: break the first element.
				fresh()
				obj := s.locate(rec)
				if arr, ok := obj[name].([]any); ok && len(arr) > 0 {
					for _, m := range propMutations(*p.Items) {
						if m.value == deleteMarker {
							continue
						}
						fresh()
						arr := s.locate(rec)[name].([]any)
						arr[0] = m.value
						check(fmt.Sprintf("%s[0]: %s", at, m.desc), at+"[0]", rec)
						n++
					}
				}
			}
		}
		if s.def == "memory_point" {
			// The conditional rule: an update needs its original memories.
			fresh()
			obj := s.locate(rec)
			obj["is_update"] = true
			delete(obj, "original_memories")
			check(s.path+": is_update true without original_memories", join(s.path, "original_memories"), rec)
			fresh()
			obj = s.locate(rec)
			obj["is_update"] = true
			obj["original_memories"] = []any{}
			check(s.path+": is_update true with empty original_memories", join(s.path, "original_memories"), rec)
			n += 2
		}
	}
	if n < 200 {
		t.Fatalf("only %d mutations: the walk missed the record's structure", n)
	}
	t.Logf("%d mutations tried", n)
}

const deleteMarker = "\x00delete"

type propMutation struct {
	desc       string
	value      any
	pathSuffix string
}

// propMutations lists the changes tried on every property, whatever its schema says, so
// that a rule only the reader has (or only the schema has) shows up as a disagreement.
func propMutations(schemaProp) []propMutation {
	return []propMutation{
		{desc: "deleted", value: deleteMarker},
		{desc: "null", value: nil},
		{desc: "a numeric string", value: "7"},
		{desc: "an empty string", value: ""},
		{desc: "an unknown word", value: "ZZ"},
		{desc: "7", value: 7},
		{desc: "0", value: 0},
		{desc: "-1", value: -1},
		{desc: "1.5", value: 1.5},
		{desc: "0.5", value: 0.5},
		{desc: "1", value: 1},
		{desc: "0.4", value: 0.4},
		{desc: "true", value: true},
		{desc: "false", value: false},
		{desc: "an empty array", value: []any{}},
		{desc: "an array of a string", value: []any{"x"}},
		{desc: "an array of a number", value: []any{1}},
		{desc: "an object", value: map[string]any{}},
	}
}

// blames reports whether the reader's error path points at the mutated field: the field
// itself, something inside it, or, for is_update, the original_memories the change requires.
func blames(got, mutated string) bool {
	if got == mutated || strings.HasPrefix(got, mutated+"[") || strings.HasPrefix(got, mutated+".") {
		return true
	}
	base, ok := strings.CutSuffix(mutated, ".is_update")
	return ok && got == base+".original_memories"
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func uniq(a, b int) []int {
	if a >= b {
		return []int{a}
	}
	return []int{a, b}
}

// lookup follows a path like probes[1].questions[0] in a decoded record.
func lookup(root map[string]any, path string) map[string]any {
	cur := any(root)
	if path == "" {
		return root
	}
	for _, part := range strings.Split(path, ".") {
		name, idx, _ := strings.Cut(part, "[")
		cur = cur.(map[string]any)[name]
		if idx != "" {
			var i int
			fmt.Sscanf(idx, "%d]", &i)
			cur = cur.([]any)[i]
		}
	}
	return cur.(map[string]any)
}

func firstLine(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() {
		t.Fatal("empty fixture")
	}
	return slices.Clone(sc.Bytes())
}
