package answer

import (
	"strings"
	"testing"
)

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

// TestStances reads one sentence of each stance and checks the stance and the cue of its
// claim about the umbrella's colour.
func TestStances(t *testing.T) {
	for _, c := range []struct {
		text   string
		stance Stance
		cue    string
	}{
		{"The umbrella is black.", Asserted, ""},
		{"The umbrella is not black.", Negated, "not"},
		{"伞不是黑色的。", Negated, "不是"},
		{"Is the umbrella black?", Questioned, "?"},
		{"伞是黑色的吗？", Questioned, "吗"},
		{"The umbrella is probably black.", Hedged, "probably"},
		{"伞可能是黑色的。", Hedged, "可能"},
		{"I'm not sure whether the umbrella is black.", Uncertain, "not sure"},
		{"我不确定伞是不是黑色的。", Uncertain, "不确定"},
		{"The umbrella is black, red or blue.", Alternative, "or"},
		{"伞是黑色、红色、蓝色或者绿色。", Alternative, "或者"},
		{"You said the umbrella is black.", Attributed, "you said"},
		{"Some people would say the umbrella is black.", Attributed, "say"},
		{"你说伞是黑色的。", Attributed, "你说"},
		{"The umbrella is black. I was wrong.", Retracted, "i was wrong"},
		{"伞是黑色的。我说错了。", Retracted, "说错了"},
	} {
		r := Read(c.text, vocab)
		cl := r.About(Color, "umbrella")
		if len(cl) == 0 {
			t.Errorf("%q: no claim; %+v", c.text, r.Claims)
			continue
		}
		got := cl[0]
		if got.Stance != c.stance || got.Cue != c.cue || got.Value != "black" {
			t.Errorf("%q: %s %q (cue %q), want %s %q (cue %q)", c.text, got.Stance, got.Value, got.Cue, c.stance, "black", c.cue)
		}
	}
}

// TestBinding: values bind by grammatical scope, not by distance; counts are read in words,
// digits and Chinese numerals; numbers that count nothing make no claim.
func TestBinding(t *testing.T) {
	for _, c := range []struct {
		text, attr, obj, want string
	}{
		{"The man's coat is red.", Color, "coat", "red"},
		{"It is the man's coat that is red.", Color, "coat", "red"},
		{"A woman in a red coat holds a black umbrella.", Color, "umbrella", "black"},
		{"A woman in a red coat holds a black umbrella.", Color, "coat", "red"},
		{"The umbrella is black; the coat is red.", Color, "umbrella", "black"},
		{"There are 3 apples.", Count, "apple", "3"},
		{"There are twelve apples.", Count, "apple", "12"},
		{"桌上有十二个苹果。", Count, "apple", "12"},
		{"桌上有两个苹果。", Count, "apple", "2"},
		{"Four apples are left: there were five and one was eaten.", Count, "apple", "4"},
		{"Three apples are left, since you ate two of the five.", Count, "apple", "3"},
		{"红色的是外套，伞是黑色的。", Color, "umbrella", "black"},
	} {
		r := Read(c.text, Scope{Objects: append(vocab.Objects, Object{ID: "coat", Names: []string{"coat", "外套"}})})
		got, ok := r.Final(c.attr, c.obj)
		if !ok || got.Value != c.want || (got.Object != c.obj && got.Object != "") {
			t.Errorf("%q: Final(%s, %s) = %+v (%v), want %s; claims %+v", c.text, c.attr, c.obj, got, ok, c.want, r.Claims)
		}
	}
	for _, text := range []string{"The clock shows ten past three.", "每排三个。", "教室里有一块黑板。", "5月12日", "It is 3.5 metres long."} {
		r := Read(text, vocab)
		for _, c := range r.Claims {
			if c.Attribute == Count && c.Value != "1" || c.Attribute == Color {
				t.Errorf("%q: claim %+v", text, c)
			}
		}
	}
}

// TestConcurrentReads reads from many goroutines with one Reader (the judge does): run with
// -race.
func TestConcurrentReads(t *testing.T) {
	rd := NewReader(vocab)
	want := rd.Read("The umbrella is black. Just kidding, it is red.")
	done := make(chan Reading)
	for range 8 {
		go func() {
			var r Reading
			for range 50 {
				r = rd.Read("The umbrella is black. Just kidding, it is red.")
			}
			done <- r
		}()
	}
	for range 8 {
		r := <-done
		if len(r.Claims) != len(want.Claims) || r.Claims[1] != want.Claims[1] {
			t.Fatalf("got %+v, want %+v", r.Claims, want.Claims)
		}
	}
}

// TestSaladAgreesWithRead: the quick Salad gives Read's verdict.
func TestSaladAgreesWithRead(t *testing.T) {
	rd := NewReader(vocab)
	for _, text := range []string{"dog grass tree lies under the on", "grass tree dog lying the under on grass", "狗 草地 树 躺 下 在",
		"cat sofa sleeps on the under", "The dog lies on the grass under the tree.", "Bananas, oranges and strawberries.",
		"狗躺在树下的草地上。", "Black.", "The title on the top book reads \"Data Structures\".", "I put it on the table and"} {
		if got, want := rd.Salad(text), rd.Read(text).Salad; got != want {
			t.Errorf("%q: Salad %v, Read %v", text, got, want)
		}
	}
}

// TestFoldFastPaths: the shortcuts give what the full fold gives.
func TestFoldFastPaths(t *testing.T) {
	for _, s := range []string{"The Cup  is\tGREEN. ", "伞是黑色的。", "伞是 黑色的", "Ｔｈｅ杯子", "“引号”", "Ünïcode Café", " lead", "", "a  b"} {
		var b []rune
		space := false
		for _, r := range s {
			if r == ' ' || r == '\t' || r == '\n' {
				space = true
				continue
			}
			if space && len(b) > 0 {
				b = append(b, ' ')
			}
			space = false
			b = append(b, r)
		}
		want := strings.ToLower(string(b))
		if strings.ContainsAny(s, "Ｔ“") {
			continue // width and quote folding: checked by TestCanonical's spellings
		}
		if got := fold(s); got != want {
			t.Errorf("fold(%q) = %q, want %q", s, got, want)
		}
	}
	if fold("Ｔｈｅ杯子") != "the杯子" || fold("“引号”") != "\"引号\"" {
		t.Errorf("width or quotes: %q %q", fold("Ｔｈｅ杯子"), fold("“引号”"))
	}
}

// TestPlainAndValued: the quick looks agree with what Read finds.
func TestPlainAndValued(t *testing.T) {
	rd := NewReader(vocab)
	for _, c := range []struct {
		text          string
		plain, valued bool
	}{
		{"The umbrella is black.", true, true},
		{"The umbrella is black; the coat is red.", true, true},
		{"The umbrella is black, red, blue.", false, true},
		{"It might be black.", false, true},
		{"The umbrella is black. Just kidding, it is red.", false, true},
		{"There were five apples.", false, true},
		{"Is it black?", false, true},
		{"It is raining: the ground is wet.", true, true},
		{"Because of the weather.", true, false},
		{"因为天气。", true, false},
		{"伞是黑色的，但其实是红色的。", false, true},
		{"桌上有三个苹果。", true, true},
	} {
		if got := rd.Plain(c.text); got != c.plain {
			t.Errorf("Plain(%q) = %v", c.text, got)
		}
		if got := rd.Valued(c.text); got != c.valued {
			t.Errorf("Valued(%q) = %v", c.text, got)
		}
		if r := rd.Read(c.text); !rd.Valued(c.text) && len(r.Claims) > 0 {
			t.Errorf("%q: not Valued but Read finds %+v", c.text, r.Claims)
		}
	}
}
