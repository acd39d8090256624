package dataset

import (
	"errors"
	"reflect"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"golang.org/x/text/language"
)

func TestParseMeta(t *testing.T) {
	m, err := ParseMeta([]byte(`{"language":"zh","phase":"attribute_swap","entity":"car","attribute":"color",
		"false_value":"red","true_value":"blue","old_value":"a","new_value":"b","required_evidence":["wet ground"],
		"objects_per_image":[[{"id":"car_1","type":"vehicle","attributes":{"color":"red"}}],[]],
		"ambiguous":true,"target_image":2,"confusable_objects":3,"coverage":0.5,"split":"dev",
		"evidence_depends_on":[[],[0]]}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Language != "zh" || m.FalseValue != "red" || m.TargetImage != 2 || *m.ConfusableObjects != 3 || *m.Coverage != 0.5 ||
		!*m.Ambiguous || len(m.ObjectsPerImage) != 2 || m.ObjectsPerImage[0][0].Attributes["color"] != "red" || m.RequiredEvidence[0] != "wet ground" ||
		len(m.EvidenceDependsOn) != 2 || len(m.EvidenceDependsOn[0]) != 0 || m.EvidenceDependsOn[1][0] != 0 {
		t.Errorf("parsed %+v", m)
	}
	if m, err := ParseMeta(nil); err != nil || m.Language != "" {
		t.Errorf("empty meta: %+v %v", m, err)
	}
	for raw, key := range map[string]string{
		`{"language":"not a tag!"}`:                  "language", // any well-formed tag is accepted (#39)
		`{"language":3}`:                             "language",
		`{"phase":"warmup"}`:                         "phase",
		`{"false_value":["red"]}`:                    "false_value",
		`{"required_evidence":"wet ground"}`:         "required_evidence",
		`{"objects_per_image":[{"id":"x"}]}`:         "objects_per_image[0]",
		`{"objects_per_image":[[{"id":1}]]}`:         "objects_per_image[0][0]",
		`{"objects_per_image":[[{"colour":"red"}]]}`: "objects_per_image[0][0]",
		`{"ambiguous":"yes"}`:                        "ambiguous",
		`{"target_image":0}`:                         "target_image",
		`{"target_image":1.5}`:                       "target_image",
		`{"confusable_objects":-1}`:                  "confusable_objects",
		`{"coverage":1.2}`:                           "coverage",
		`{"evidence_depends_on":[0]}`:                "evidence_depends_on",
		`{"evidence_depends_on":[[0],[-1]]}`:         "evidence_depends_on[1]",
		`{"evidence_depends_on":[[0.5]]}`:            "evidence_depends_on[0]",
	} {
		_, err := ParseMeta([]byte(raw))
		var me *MetaError
		if !errors.As(err, &me) || me.Key != key {
			t.Errorf("%s: error %v, want one naming meta.%s", raw, err, key)
		}
	}
}

// objectsCases are objects_per_image values that objectsFast accepts or must leave to
// objectsStrict: unknown keys, names in other cases, keys given twice, null objects and
// images, invalid UTF-8, wrong types.
var objectsCases = []string{
	`null`, `[]`, `[[]]`, `[null]`, `[[null]]`, `[[{}]]`, `[[{"id":"a","type":"t","attributes":{"k":"v"}}],[]]`,
	`[[{"id":"a","type":"t","attributes":{"k":null}}]]`, `[[{"id":null,"type":"t","attributes":null}]]`,
	`[[{"ID":"a"}]]`, `[[{"id":"a","colour":"red"}]]`, `[[{"id":"a","id":"b"}]]`, "[[{\"id\":\"\xff\"}]]",
	`[[{"id":1}]]`, `[{"id":"a"}]`, `[["a"]]`, `{"a":[]}`, `[[{"attributes":{"k":1}}]]`, `[[{"attributes":{"k":"v","k":"w"}}]]`,
	`[[{"id":"a"}],null,[{"type":"b"}]]`, `[[{"id":"\u00e9\ud800"}]]`,
}

// TestObjectsFastAcceptsOnlyStrict: what objectsFast accepts, objectsStrict accepts too, with
// the objects the v1-compatible decoding gives; so ParseMeta accepts and returns what it did.
func TestObjectsFastAcceptsOnlyStrict(t *testing.T) {
	accepted := 0
	for _, c := range objectsCases {
		if checkObjectsFast(t, []byte(c)) {
			accepted++
		}
	}
	if accepted < 5 {
		t.Errorf("objectsFast accepted %d cases: the fast path is not taken", accepted)
	}
}

func FuzzObjectsFast(f *testing.F) {
	for _, c := range objectsCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, v []byte) { checkObjectsFast(t, v) })
}

// checkObjectsFast checks objectsFast against objectsStrict and the v1-compatible decoding on
// one value, and says whether objectsFast accepted it.
func checkObjectsFast(t *testing.T, v []byte) bool {
	got, ok := objectsFast(jsontext.Value(v))
	if !ok {
		return false
	}
	raw := append(append([]byte(`{"objects_per_image":`), v...), '}')
	if !objectsStrict(raw) {
		t.Errorf("%s: objectsFast accepts what objectsStrict refuses", v)
	}
	var want [][]MetaObject
	if err := jsonv2.Unmarshal(v, &want, jsonv1.DefaultOptionsV1()); err != nil {
		t.Errorf("%s: objectsFast accepts what the v1-compatible decoding refuses: %v", v, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: objectsFast gave %#v, the v1-compatible decoding %#v", v, got, want)
	}
	return true
}

// TestValidLanguageShortcut: the tags validLanguage accepts without parsing are tags.
func TestValidLanguageShortcut(t *testing.T) {
	for _, tag := range []string{"en", "zh"} {
		if _, err := language.Parse(tag); err != nil || !validLanguage(tag) {
			t.Errorf("%s: language.Parse says %v, validLanguage %v", tag, err, validLanguage(tag))
		}
	}
}
