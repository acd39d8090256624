package dataset

import (
	"errors"
	"testing"
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
