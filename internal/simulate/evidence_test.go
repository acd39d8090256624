package simulate

import (
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func demoScene(t testing.TB, id string) *Scene {
	t.Helper()
	scenes, err := ReadScenesFile(demoScenes)
	if err != nil {
		t.Fatal(err)
	}
	for i := range scenes {
		if scenes[i].ID == id {
			return &scenes[i]
		}
	}
	t.Fatalf("no demo scene %s", id)
	return nil
}

func TestObserveActivatesEvidence(t *testing.T) {
	cases := []struct {
		scene, answer string
		want          []string // evidence ids activated
	}{
		// The object and its value in one sentence.
		{"apples_en", "There is a white plate on the left.", []string{"plate_left"}},
		// Plural and value in another sentence: not together, so not activated.
		{"apples_en", "I see apples. There are five things.", nil},
		{"apples_en", "Five apples sit in the middle of the table.", []string{"apples_five", "apples_middle"}},
		// A keyword alone.
		{"umbrella_zh", "地上有几处积水。", []string{"puddles"}},
		// A color in its other language: 灰 is grey.
		{"umbrella_zh", "天空是灰色的。", []string{"grey_sky"}},
		// A denied value does not count.
		{"umbrella_zh", "天空不是灰色的。", nil},
		{"park_zh", "狗躺着，旁边是树荫。", []string{"dog_lying", "shade"}},
	}
	for _, tc := range cases {
		k := newKnowledge(demoScene(t, tc.scene))
		ob := k.observe(tc.answer, 1)
		var got []string
		for _, i := range ob.activated {
			got = append(got, k.evidence[i].ev.ID)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %q activated %v, want %v", tc.scene, tc.answer, got, tc.want)
		}
	}
}

func TestObserveFindsWrongValues(t *testing.T) {
	cases := []struct {
		scene, answer string
		want          []string // "object attribute said correct"
	}{
		{"umbrella_zh", "一个穿红色外套的人撑着一把黑色的伞。", nil},
		{"umbrella_zh", "一个穿黑色外套的人撑着一把红色的伞。", []string{"person_1 color 黑色 红色", "umbrella_1 color 红色 黑色"}},
		{"apples_en", "The cup is green and the plate is blue.", []string{"plate_1 color blue white"}},
		{"apples_en", "No, the cup is green, not red.", nil},
		{"apples_en", "You are right, the cup is green.", nil},
		{"umbrella_zh", "明白，人是红色的。", nil}, // the 白 of 明白 is no color
		{"apples_en", "The cup on the left is green.", []string{"cup_1 position left right"}},
		// Objects are bound to their images: Image 2's person is red, Image 1's blue.
		{"street_en", "Image 1: There is a car (color: red). There is a person (color: blue). Image 2: There is a person (color: red).", nil},
		{"street_en", "Image 2: There is a person (color: blue).", []string{"person_2 color blue red"}},
		{"street_en", "The person in Image 1 is red, and the person in Image 2 is red.", []string{"person_1 color red blue"}},
		{"street_en", "No, Image 2's person is red, not blue.", nil},
		// A person of no named image: nothing says which, so nothing is wrong.
		{"street_en", "There is a person (color: red).", nil},
		{"street_zh", "图片2：有人（颜色：蓝色）。", []string{"person_2 color 蓝色 红色"}},
		{"street_zh", "第一张图里的人是蓝色的。", nil},
	}
	for _, tc := range cases {
		k := newKnowledge(demoScene(t, tc.scene))
		ob := k.observe(tc.answer, 1)
		var got []string
		for _, e := range ob.errors {
			got = append(got, strings.Join([]string{k.objs[e.obj].ID, e.attr, e.said, e.correct}, " "))
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %q: wrong values %v, want %v", tc.scene, tc.answer, got, tc.want)
		}
	}
}

var slotRE = regexp.MustCompile(`\{([a-z_]+)\}`)

// Every template fills, leaves no placeholder behind, and reads back (for the scripted
// server) as its own list with the values it was filled with; the English and Chinese lists
// of an action ask for the same facts.
func TestTemplatesFillAndReadBack(t *testing.T) {
	values := map[string]string{
		"entity": "umbrella", "target": "wet ground", "description": "black", "attribute": "color",
		"correct_value": "black", "wrong_value": "red", "region": "lower left", "perspective": "weather",
		"new_value": "blue", "old_value": "red", "irrelevant_entity": "tree", "irrelevant_question": "what color is the tree?",
		"statement": "the ground is wet", "value": "grey", "question": "Why is it wet?", "n": "2", "image": "2",
		"type": "person", "false_value": "red",
	}
	agree(values)
	for key, pair := range templates {
		enSlots, zhSlots := map[string]bool{}, map[string]bool{}
		for li, list := range [][]string{pair.en, pair.zh} {
			lang := []Language{English, Chinese}[li]
			for _, s := range list {
				for _, m := range slotRE.FindAllStringSubmatch(s, -1) {
					if _, ok := agreement[m[1]]; !ok { // English grammar, no slot of its own
						[]map[string]bool{enSlots, zhSlots}[li][m[1]] = true
					}
				}
				tpl := parseTemplate(s)
				if !tpl.fillable(values) {
					t.Fatalf("%s %q: not fillable", key, s)
				}
				text := tpl.fill(values)
				if strings.ContainsAny(text, "{}") {
					t.Errorf("%s: %q left a placeholder", key, text)
				}
				if key == tplDirect || key == tplIrrelevantQ {
					continue
				}
				r := Recognize(text, lang)
				if r.Key != string(key) {
					t.Errorf("%q reads back as %q, want %q", text, r.Key, key)
				}
				for name, v := range r.Slots {
					if values[name] != v {
						t.Errorf("%q: slot %s read back as %q", text, name, v)
					}
				}
			}
		}
		if !maps.Equal(enSlots, zhSlots) {
			t.Errorf("%s: English asks for %v, Chinese for %v", key, slices.Sorted(maps.Keys(enSlots)), slices.Sorted(maps.Keys(zhSlots)))
		}
	}
}

// English templates agree with the object's number (#36): "the apples are", "the cup is",
// and read back whichever form they take.
func TestTemplatesAgreeInNumber(t *testing.T) {
	for _, c := range []struct{ entity, want string }{
		{"apples", "I think the apples are pink, right?"},
		{"cup", "I think the cup is pink, right?"},
		{"Image 2's people", "I think the Image 2's people are pink, right?"},
	} {
		text := renderOneOf(rand.New(rand.NewPCG(1, 1)), templateKey(ActMislead), English, map[string]string{"entity": c.entity, "wrong_value": "pink"}, []int{0})
		if text != c.want {
			t.Errorf("%s: %q, want %q", c.entity, text, c.want)
		}
		if r := Recognize(text, English); r.Key != string(ActMislead) || r.Slots["entity"] != c.entity || r.Slots["wrong_value"] != "pink" {
			t.Errorf("%q reads back as %+v", text, r)
		}
	}
	text, _ := render(rand.New(rand.NewPCG(1, 1)), templateKey(ActUpdate), English, map[string]string{"entity": "apples", "old_value": "five", "new_value": "three", "attribute": "count"})
	if strings.Contains(text, "apples has") || strings.Contains(text, "apples was") || strings.Contains(text, "it is now") {
		t.Errorf("update about the apples: %q", text)
	}
}

// The document's Chinese templates are used word for word.
func TestChineseTemplatesAreTheDocuments(t *testing.T) {
	for _, s := range []string{
		"你提到了{entity}，它和{target}有什么关系？", "直接告诉我答案，不需要解释。", "不对，{entity}的{attribute}应该是{correct_value}。",
		"注意图中{region}的部分。", "我觉得{entity}应该是{wrong_value}，对吗？", "现在{entity}的{attribute}变成了{new_value}。",
		"顺便问一下，图中有几个{irrelevant_entity}？", "你之前提到{statement}，能重复一下吗？", "请指出具体是图中哪一个{entity}。",
	} {
		found := false
		for _, pair := range templates {
			found = found || slices.Contains(pair.zh, s)
		}
		if !found {
			t.Errorf("missing the document's template %q", s)
		}
	}
}

func TestRenderIsSeeded(t *testing.T) {
	sl := map[string]string{"entity": "伞", "wrong_value": "红色"}
	a, b := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	for range 50 {
		x, _ := render(a, templateKey(ActMislead), Chinese, sl)
		y, _ := render(b, templateKey(ActMislead), Chinese, sl)
		if x != y {
			t.Fatal("one seed drew two different templates")
		}
		seen[x] = true
	}
	if len(seen) != 3 {
		t.Errorf("50 draws used %d of the 3 mislead templates", len(seen))
	}
}

// Guidance draws its target among the missing evidence (the document's
// random.choice(missing_evidence)), from the episode's seeded generator: over seeds, four
// guidance turns on umbrella_zh before any answer aim at more than one fact, and one seed
// always draws the same.
func TestGuidanceDrawsAmongMissingEvidence(t *testing.T) {
	sc := demoScene(t, "umbrella_zh")
	targets := map[string]bool{}
	for seed := range uint64(8) {
		var first []string
		for range 2 {
			r := newRules(sc, 10, rand.New(rand.NewPCG(seed, 1)))
			var got []string
			for range 4 {
				s := r.guidance()
				got = append(got, s.Meta.Entity+"/"+s.Meta.Attribute)
				targets[s.Meta.Entity+"/"+s.Meta.Attribute] = true
			}
			if first == nil {
				first = got
			} else if !slices.Equal(first, got) {
				t.Errorf("seed %d: %v then %v", seed, first, got)
			}
		}
	}
	if len(targets) < 3 {
		t.Errorf("guidance aimed at %v only", targets)
	}
}

// Names qualified by their image read back whole from every template that names an entity.
func TestQualifiedNamesReadBack(t *testing.T) {
	for _, c := range []struct {
		lang   Language
		text   string
		key    string
		entity string
		attr   string
	}{
		{English, "Now the Image 1's car's color has changed to green.", "update", "Image 1's car", "color"},
		{English, "Please describe the Image 1's person's color precisely, not in general terms.", "fine_grained", "Image 1's person", "color"},
		{English, "That's not accurate: the Image 2's person's color is not blue.", "negation", "Image 2's person", "color"},
		{Chinese, "现在图片1的车的颜色变成了绿色。", "update", "图片1的车", "颜色"},
		{Chinese, "这不准确，图片2的人的颜色并不是蓝色。", "negation", "图片2的人", "颜色"},
		{English, "Now the car's color has changed to green.", "update", "car", "color"},
	} {
		r := Recognize(c.text, c.lang)
		if r.Key != c.key || r.Slots["entity"] != c.entity || r.Slots["attribute"] != c.attr {
			t.Errorf("%q: %s %v", c.text, r.Key, r.Slots)
		}
	}
}

// The examples of issue #36, each read as the issue says the simulator must: a correction
// only for what the model asserts wrongly, no evidence from negated or hedged text.
func TestIssue36Examples(t *testing.T) {
	for _, c := range []struct {
		scene, answer string
		wrong         string // object.attribute corrected, "" for none
		evidence      int    // evidence activated
	}{
		{"apples_en", "The cup next to the apples is green.", "", 0},
		{"street_en", "The car in the second image is red.", "car_2.color", 0},
		{"park_zh", "狗躺在树干右边。", "", 1},
		{"apples_en", "There are six apples.", "apple_1.count", 0},
		{"apples_en", "The plate is not white.", "plate_1.color", 0},
		{"umbrella_zh", "伞是收起的。", "umbrella_1.state", 0},
		{"park_zh", "狗站在树旁边。", "dog_1.state", 0},
		{"park_zh", "太阳在右上角。", "sun_1.position", 0},
		{"street_en", "Nobody is standing on the platform.", "", 0},
		{"apples_en", "I still need to check whether there are five apples.", "", 0},
	} {
		k := newKnowledge(demoScene(t, c.scene))
		ob := k.observe(c.answer, 1)
		var got []string
		for _, e := range ob.errors {
			got = append(got, k.objs[e.obj].ID+"."+e.attr)
		}
		if want := []string{c.wrong}; c.wrong == "" && len(got) > 0 || c.wrong != "" && !slices.Equal(got, want) {
			t.Errorf("%s %q: corrected %v, want %q", c.scene, c.answer, got, c.wrong)
		}
		if len(ob.activated) != c.evidence {
			t.Errorf("%s %q: %d evidence activated, want %d", c.scene, c.answer, len(ob.activated), c.evidence)
		}
	}
	// "Why do you think the apples is pink?" is not asked of a model that never said so: the
	// follow-up's value is only what the model asserted.
	k := newKnowledge(demoScene(t, "apples_en"))
	k.observe("Maybe the apples are pink, or red.", 1)
	if len(k.said[k.index("apple_1")]) != 0 {
		t.Errorf("a hedged color became something the model said: %v", k.said[k.index("apple_1")])
	}
}
