package answer

import "testing"

// vocab is a scope with the objects of the examples, named in both languages.
var vocab = Scope{Objects: []Object{
	{ID: "cup", Names: []string{"cup", "杯子"}},
	{ID: "apple", Names: []string{"apple", "apples", "苹果"}},
	{ID: "umbrella", Names: []string{"umbrella", "伞"}},
	{ID: "car", Names: []string{"car", "车"}},
	{ID: "trunk", Names: []string{"树"}},
}}

// TestFinalClaims reads the sentences and checks the final claim about one attribute
// of one object, and the stance of the last claim about it.
func TestFinalClaims(t *testing.T) {
	for _, c := range []struct {
		text, attr, obj string
		final           string // "" when nothing is asserted
		last            Stance // stance of the last claim about it
	}{
		{"The cup next to the apples is green.", Color, "cup", "green", Asserted},
		{"The cup next to the apples is green.", Color, "apple", "green", Asserted}, // a claim about the cup only
		{"People often assume the umbrella is black, but it is clearly red.", Color, "umbrella", "red", Asserted},
		{"The umbrella is black. Just kidding, it is red.", Color, "umbrella", "red", Asserted},
		{"There are three apples on the table, as well as two more, so five apples in total.", Count, "apple", "5", Asserted},
		{"There are six apples.", Count, "apple", "6", Asserted},
		{"The plate is not white.", Color, "plate", "", Negated},
		{"I still need to check whether there are five apples.", Count, "apple", "", Uncertain},
		{"It could be black, red or blue.", Color, "umbrella", "", Alternative},
		{"The umbrella is black, red, blue, green.", Color, "umbrella", "", Alternative},
		{"The umbrella might be black.", Color, "umbrella", "", Hedged},
		{"Is the umbrella black?", Color, "umbrella", "", Questioned},
		{"dog grass tree lies under the on", State, "", "", Uncertain},
		{"Black.", Color, "umbrella", "black", Asserted},
		{"苹果旁边的杯子是绿色的。", Color, "cup", "green", Asserted},
		{"桌上有三个苹果。", Count, "apple", "3", Asserted},
		{"伞不是红色的，是黑色的。", Color, "umbrella", "black", Asserted},
		{"伞是黑色的。开玩笑的，是红色的。", Color, "umbrella", "red", Asserted},
		{"有人认为伞是黑色的，但其实是红色的。", Color, "umbrella", "red", Asserted},
	} {
		r := Read(c.text, vocab)
		got, ok := r.Final(c.attr, c.obj)
		if c.final == "" && ok {
			t.Errorf("%q: Final(%s, %s) = %q, want nothing asserted", c.text, c.attr, c.obj, got.Value)
		}
		if c.final != "" && c.obj == "apple" && c.attr == Color {
			// The cup sentence: the apples get no colour.
			if ok {
				t.Errorf("%q: the apples got colour %q", c.text, got.Value)
			}
			continue
		}
		if c.final != "" && (!ok || got.Value != c.final) {
			t.Errorf("%q: Final(%s, %s) = %q (%v), want %q; claims %+v", c.text, c.attr, c.obj, got.Value, ok, c.final, r.Claims)
		}
		all := r.About(c.attr, c.obj)
		if len(all) == 0 {
			t.Errorf("%q: no claim about %s of %s", c.text, c.attr, c.obj)
			continue
		}
		if s := all[len(all)-1].Stance; s != c.last {
			t.Errorf("%q: last claim %s, want %s", c.text, s, c.last)
		}
	}
}

// TestImages reads explicit images, ordinals and the image in scope.
func TestImages(t *testing.T) {
	sc := Scope{Images: 3, Image: 1}
	for _, c := range []struct {
		text string
		img  int
	}{
		{"The car in the second image is blue.", 2},
		{"In image 3 the car is blue.", 3},
		{"The car in the last picture is blue.", 3},
		{"The car is blue.", 1},
		{"图2中的车是蓝色的。", 2},
		{"第三张图里的车是蓝色的。", 3},
	} {
		r := Read(c.text, sc)
		got, ok := r.Final(Color, "")
		if !ok || got.Image != c.img || got.Value != "blue" {
			t.Errorf("%q: %+v (%v), want blue in image %d", c.text, got, ok, c.img)
		}
	}
}

// TestSceneValues: a scene value that holds an object's name is a value; a value outside the
// scene's vocabulary is still read.
func TestSceneValues(t *testing.T) {
	sc := Scope{Language: Chinese, Objects: []Object{
		{ID: "bird", Names: []string{"鸟"}, Attributes: map[string]string{"position": "树干右边"}},
		{ID: "tree", Names: []string{"树"}},
	}}
	r := Read("鸟在树干右边。", sc)
	c, ok := r.Final(Position, "bird")
	if !ok || c.Value != "树干右边" || c.Object != "bird" {
		t.Fatalf("got %+v (%v); claims %+v", c, ok, r.Claims)
	}
	r = Read("鸟在右上角。", sc)
	if c, ok := r.Final(Position, "bird"); !ok || c.Value != "top right" {
		t.Fatalf("value outside the scene: %+v (%v)", c, ok)
	}
}

// TestContent: cue phrases alone say nothing; a salad asserts nothing.
func TestContent(t *testing.T) {
	r := Read("Based on the evidence in the image, I can see several things. Because of this, the answer follows.", vocab)
	if r.HasContent() {
		t.Errorf("padding has content: %+v", r)
	}
	if r := Read("dog grass tree lies under the on", vocab); !r.Salad || r.HasContent() {
		t.Errorf("salad: %+v", r)
	}
	if r := Read("The umbrella is black.", vocab); r.Salad || !r.HasContent() {
		t.Errorf("sentence: %+v", r)
	}
}

func TestCanonical(t *testing.T) {
	for _, c := range [][3]string{{Color, "gray", "grey"}, {Color, "灰色", "grey"}, {Count, "三", "3"}, {Count, "five", "5"}, {Color, "teal", "teal"}} {
		if got := Canonical(c[0], c[1]); got != c[2] {
			t.Errorf("Canonical(%s, %s) = %s, want %s", c[0], c[1], got, c[2])
		}
	}
}
