package demovlm

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/m3bench/m3eval/internal/simulate"
	"github.com/m3bench/m3eval/internal/vlm"
)

// world is what a persona believes: the scene's objects with the values it would state,
// after the updates the user announced so far.
type world struct {
	sc    *simulate.Scene
	lang  simulate.Language
	objs  []*simulate.Object
	image []int
	vals  []map[string]string
	qname []string // the names user turns give the objects ("Image 2's person")
	// updated are the values the conversation's updates set.
	updated map[objAttr]string
}

// objAttr is an attribute of one object (its index in world.objs).
type objAttr struct {
	obj  int
	attr string
}

func newWorld(sc *simulate.Scene, p Persona) *world {
	w := &world{sc: sc, lang: sc.Language}
	for i := range sc.ObjectsPerImage {
		for j := range sc.ObjectsPerImage[i] {
			o := &sc.ObjectsPerImage[i][j]
			w.objs = append(w.objs, o)
			w.image = append(w.image, i)
			w.vals = append(w.vals, maps.Clone(o.Attributes))
		}
	}
	w.qname = simulate.QualifiedNames(sc)
	if p == Confused {
		w.confuse()
	}
	return w
}

// confuse gives each object the attributes of an object of its type in another image; in a
// one-image scene, each colored object takes the next colored object's color.
func (w *world) confuse() {
	orig := make([]map[string]string, len(w.vals))
	for i := range w.vals {
		orig[i] = maps.Clone(w.vals[i])
	}
	swapped := false
	for i := range w.objs {
		for j := range w.objs {
			if w.objs[i].Type == w.objs[j].Type && w.image[i] != w.image[j] {
				for a, v := range orig[j] {
					if _, ok := w.vals[i][a]; ok {
						w.vals[i][a] = v
					}
				}
				swapped = true
				break
			}
		}
	}
	if swapped {
		return
	}
	var colored []int
	for i := range w.objs {
		if _, ok := orig[i]["color"]; ok {
			colored = append(colored, i)
		}
	}
	for k, i := range colored {
		w.vals[i]["color"] = orig[colored[(k+1)%len(colored)]]["color"]
	}
}

func (w *world) pick(en, zh string) string {
	if w.lang == simulate.Chinese {
		return zh
	}
	return en
}

// isType reports whether a user turn's type word (or shared name) refers to object i.
func (w *world) isType(i int, word string) bool {
	return simulate.TypeWord(w.objs[i].Type, w.lang) == word || w.name(i) == word
}

func (w *world) name(i int) string { return simulate.DisplayName(w.objs[i], w.lang) }

// find is the object a user turn names (display name or type word), preferring image img
// (1-based; 0 = any).
func (w *world) find(name string, img int) int {
	if base, qi := simulate.SplitQualified(name, w.lang); qi > 0 {
		name, img = base, qi
	}
	best := -1
	for i := range w.objs {
		if w.name(i) == name || simulate.TypeWord(w.objs[i].Type, w.lang) == name || w.objs[i].ID == name {
			if img == 0 || w.image[i] == img-1 {
				return i
			}
			if best < 0 {
				best = i
			}
		}
	}
	return best
}

// attrOf is the attribute a user turn means: by its name, else the one whose value is like v.
func (w *world) attrOf(i int, attrName, v string) string {
	for _, a := range slices.Sorted(maps.Keys(w.vals[i])) {
		if attrName != "" && simulate.AttributeName(a, w.lang) == attrName {
			return a
		}
	}
	for _, a := range slices.Sorted(maps.Keys(w.vals[i])) {
		if a == "color" && isColor(v) {
			return a
		}
	}
	for j := range w.objs {
		for a, x := range w.vals[j] {
			if _, ok := w.vals[i][a]; ok && simulate.SameValue(x, v) {
				return a
			}
		}
	}
	for _, a := range slices.Sorted(maps.Keys(w.vals[i])) {
		return a
	}
	return ""
}

func isColor(v string) bool {
	for _, c := range []string{"red", "blue", "green", "yellow", "black", "white", "grey", "brown", "orange", "pink", "purple"} {
		if simulate.SameValue(v, c) {
			return true
		}
	}
	return false
}

// sentence states one object: "There is a person (color: red)." / "有人（颜色：红色）。"
func (w *world) sentence(i int, only string) string {
	var parts []string
	for _, a := range slices.Sorted(maps.Keys(w.vals[i])) {
		if only != "" && a != only {
			continue
		}
		parts = append(parts, simulate.AttributeName(a, w.lang)+w.pick(": ", "：")+w.vals[i][a])
	}
	if len(parts) == 0 {
		return w.pick("There is a "+w.name(i)+".", "有"+w.name(i)+"。")
	}
	return w.pick("There is a "+w.name(i)+" ("+strings.Join(parts, ", ")+").", "有"+w.name(i)+"（"+strings.Join(parts, "，")+"）。")
}

// setUpdated records a value an update set.
func (w *world) setUpdated(i int, a, v string) {
	if w.updated == nil {
		w.updated = map[objAttr]string{}
	}
	w.updated[objAttr{i, a}] = v
}

// sentenceIn states one object with its image, in a scene of several images: "Image 2:
// There is a person (color: red)."
func (w *world) sentenceIn(i int, only string) string {
	if len(w.sc.Images) < 2 {
		return w.sentence(i, only)
	}
	return w.pick(fmt.Sprintf("Image %d: ", w.image[i]+1), fmt.Sprintf("图片%d：", w.image[i]+1)) + w.sentence(i, only)
}

// describe states the objects of an image (0-based; -1 = all images).
func (w *world) describe(img int, only string) string {
	var b strings.Builder
	for k := range w.sc.Images {
		if img >= 0 && k != img {
			continue
		}
		if len(w.sc.Images) > 1 {
			b.WriteString(w.pick(fmt.Sprintf("Image %d: ", k+1), fmt.Sprintf("图片%d：", k+1)))
		}
		for i := range w.objs {
			if w.image[i] == k {
				b.WriteString(w.sentence(i, only))
				b.WriteString(w.pick(" ", ""))
			}
		}
	}
	return strings.TrimSpace(b.String())
}

// fact states a piece of evidence so that the simulator sees it: its text, and the object's
// value when it has one.
func (w *world) fact(ev *simulate.Evidence) string {
	s := ev.Text + w.pick(". ", "。")
	if ev.Attribute != "" {
		i := w.find(ev.Entity, 0)
		v := ev.Value
		if v == "" && i >= 0 {
			v = w.vals[i][ev.Attribute]
		}
		if i >= 0 {
			s += w.pick("The "+w.qname[i]+" "+simulate.Be(w.qname[i])+" "+v+".", w.qname[i]+"是"+v+"的。")
		}
	}
	return s
}

// answer writes the persona's reply to the conversation's last user turn.
func answer(sc *simulate.Scene, p Persona, msgs []vlm.Message) string {
	w := newWorld(sc, p)
	// The current task: the last next-task turn's question names it; the evidence tracker
	// reads the answers given since.
	ti, from := 0, 0
	for mi, m := range msgs {
		if m.Role != vlm.RoleUser {
			continue
		}
		if r := recognize(m.Text, w.lang); r.Key == string(simulate.ActNextTask) {
			for k, t := range sc.Tasks() {
				if t.Question == r.Slots["question"] {
					ti, from = k, mi
				}
			}
		}
	}
	var task *simulate.Task
	if ts := sc.Tasks(); len(ts) > 0 {
		task = ts[ti]
	}
	tr := trackerFor(sc, ti, msgs[from:])
	var last string
	for _, m := range msgs {
		switch m.Role {
		case vlm.RoleUser:
			last = m.Text
			// Updates the user announced change what every persona believes from then on,
			// in a later task too: a new task drops conclusions, not the scene's state.
			if r := recognize(m.Text, w.lang); r.Key == string(simulate.ActUpdate) {
				if i := w.find(r.Slots["entity"], 0); i >= 0 {
					if a := w.attrOf(i, r.Slots["attribute"], r.Slots["new_value"]); a != "" {
						w.vals[i][a] = r.Slots["new_value"]
						w.setUpdated(i, a, r.Slots["new_value"])
					}
				}
			}
		}
	}
	// The task's own question, asked directly, is answered as such, whatever template its
	// words happen to fit ("What color is the plate, and what color is the cup?" reads as a
	// cross-image question "What {attribute} is the {type}?").
	if task != nil && strings.TrimSpace(last) == strings.TrimSpace(task.Question) {
		return answerWithEvidence(w, task)
	}
	r := recognize(last, w.lang)
	s := r.Slots
	accepts := p == Gullible || p == Confused
	switch r.Key {
	case "opening", "opening_multi", "grounding_intro":
		return w.describe(-1, "color")
	case "grounding", "grounding_plain":
		img := atoi(s["image"]) - 1
		if p == Confused && len(sc.Images) > 1 {
			img = (img + 1) % len(sc.Images)
		}
		return w.describe(img, "")
	case string(simulate.ActGuidance), string(simulate.ActFollowUp):
		if ev := tr.Next(); ev != nil {
			return w.fact(ev)
		}
		return w.pick("I have described everything relevant already.", "相关的内容我已经都描述过了。")
	case string(simulate.ActLogicSkip):
		if p == Gullible {
			return task.Answer
		}
		if miss := tr.Missing(); len(miss) > 0 {
			var names []string
			for _, ev := range miss {
				names = append(names, ev.Text)
			}
			return w.pick("I can't skip the reasoning yet: I still need to check "+strings.Join(names, "; ")+".",
				"我还不能跳过推理：还需要确认"+strings.Join(names, "；")+"。")
		}
		return w.pick("Based on the evidence: ", "根据已有证据：") + task.Answer
	case string(simulate.ActNextTask):
		return w.pick("New task: ", "新任务：") + answerWithEvidence(w, task)
	case string(simulate.ActNegation):
		if s["correct_value"] == "" {
			return w.pick("I see, I was wrong: the "+s["entity"]+" is not "+s["wrong_value"]+".",
				"明白，是我说错了："+s["entity"]+"不是"+s["wrong_value"]+"。")
		}
		return w.pick("I see, I was wrong: the "+s["entity"]+" "+simulate.Be(s["entity"])+" "+s["correct_value"]+".",
			"明白，是我说错了："+s["entity"]+"是"+s["correct_value"]+"。")
	case string(simulate.ActMislead):
		i := w.find(s["entity"], 0)
		if i < 0 {
			return w.pick("I can't find that in the image.", "图中找不到这个。")
		}
		a := w.attrOf(i, "", s["wrong_value"])
		if accepts || simulate.SameValue(w.vals[i][a], s["wrong_value"]) {
			return w.pick("Yes, the "+s["entity"]+" "+simulate.Be(s["entity"])+" "+s["wrong_value"]+".", "是的，"+s["entity"]+"是"+s["wrong_value"]+"。")
		}
		return w.pick("No. The image shows the "+s["entity"]+" "+simulate.Be(s["entity"])+" "+w.vals[i][a]+", not "+s["wrong_value"]+".",
			"不对，图中"+s["entity"]+"是"+w.vals[i][a]+"，并不是"+s["wrong_value"]+"。")
	case string(simulate.ActUpdate):
		return w.pick("Understood: the "+s["entity"]+" "+simulate.Be(s["entity"])+" now "+s["new_value"]+".", "明白了："+s["entity"]+"现在是"+s["new_value"]+"。")
	case string(simulate.ActRedundancy):
		if s["statement"] != "" {
			return w.pick("Yes, as I said: ", "是的，正如我说的：") + s["statement"]
		}
		i := w.find(s["entity"], 0)
		if i < 0 {
			return w.pick("Yes.", "是的。")
		}
		return w.pick("Yes, as I said before: ", "是的，我之前说过：") + w.sentenceIn(i, "")
	case string(simulate.ActDistraction), string(simulate.ActFineGrained):
		name := s["irrelevant_entity"]
		if name == "" {
			name = s["entity"]
		}
		if i := w.find(name, 0); i >= 0 {
			return w.sentenceIn(i, "")
		}
		for i := range w.objs {
			if q := s["irrelevant_question"]; q != "" && strings.Contains(q, w.qname[i]) {
				return w.sentenceIn(i, "")
			}
		}
		return w.pick("There is one.", "有一个。")
	case "filler":
		return w.pick("Hard to say from the images alone; it looks like an ordinary day.", "仅凭图片很难判断，看起来是很普通的一天。")
	case string(simulate.ActCrossImageConfusion):
		var cands, vals []string
		for i := range w.objs {
			if w.isType(i, s["type"]) {
				a := w.attrOf(i, s["attribute"], "")
				vals = append(vals, w.vals[i][a])
				cands = append(cands, w.pick(fmt.Sprintf("in Image %d it is %s", w.image[i]+1, w.vals[i][a]), fmt.Sprintf("图片%d中的是%s", w.image[i]+1, w.vals[i][a])))
			}
		}
		if len(cands) == 0 {
			return w.pick("I don't see one.", "我没看到。")
		}
		if p != Faithful && p != Flaky {
			return w.pick("It is "+vals[0]+".", "它是"+vals[0]+"的。")
		}
		return w.pick("Which image do you mean? ", "您指的是哪张图片？") + strings.Join(cands, w.pick("; ", "；")) + w.pick(".", "。")
	case string(simulate.ActAmbiguousReference):
		var cands []string
		for i := range w.objs {
			for _, v := range w.vals[i] {
				if simulate.SameValue(v, s["value"]) {
					cands = append(cands, w.pick(fmt.Sprintf("the %s in Image %d", w.name(i), w.image[i]+1), fmt.Sprintf("图片%d中的%s", w.image[i]+1, w.name(i))))
					break
				}
			}
		}
		if len(cands) == 0 {
			return w.pick("I don't see anything like that.", "我没看到这样的东西。")
		}
		if p != Faithful && p != Flaky {
			return w.pick("It is ", "那是") + cands[0] + w.pick(".", "。")
		}
		return w.pick("That could be ", "这可能是") + strings.Join(cands, w.pick(" or ", "或")) + w.pick(". Which one do you mean?", "。您指的是哪一个？")
	case string(simulate.ActAttributeSwap):
		img := atoi(s["image"])
		i := w.find(s["type"], img)
		if accepts || i < 0 {
			return w.pick("Yes, the "+s["type"]+" in Image "+s["image"]+" is "+s["false_value"]+".", "是的，图片"+s["image"]+"里的"+s["type"]+"是"+s["false_value"]+"的。")
		}
		a := w.attrOf(i, "", s["false_value"])
		return w.pick("No, the "+s["type"]+" in Image "+s["image"]+" is "+w.vals[i][a]+", not "+s["false_value"]+".",
			"不对，图片"+s["image"]+"里的"+s["type"]+"是"+w.vals[i][a]+"的，不是"+s["false_value"]+"。")
	case string(simulate.ActLongContextRecall):
		for i := range w.objs {
			if !w.isType(i, s["type"]) {
				continue
			}
			for _, v := range w.vals[i] {
				if simulate.SameValue(v, s["value"]) {
					return w.pick(fmt.Sprintf("Image %d. ", w.image[i]+1), fmt.Sprintf("图片%d。", w.image[i]+1)) + w.sentence(i, "")
				}
			}
		}
		return w.pick("I don't remember one like that.", "我不记得有这样的。")
	}
	// A direct question: the task's answer with its evidence.
	if task != nil {
		return answerWithEvidence(w, task)
	}
	return w.describe(-1, "")
}

// answerWithEvidence is a task's answer and the facts it rests on, with the values the
// conversation's updates changed (a value the scene's answer text holds once) as they are
// now: a faithful model does not fall back to the state before an update.
func answerWithEvidence(w *world, task *simulate.Task) string {
	ans := task.Answer
	// In object and attribute order, each against the scene's text (not an earlier
	// replacement's result), so that the answer is the same on every run.
	keys := slices.SortedFunc(maps.Keys(w.updated), func(a, b objAttr) int {
		if a.obj != b.obj {
			return a.obj - b.obj
		}
		return strings.Compare(a.attr, b.attr)
	})
	for _, k := range keys {
		nv := w.updated[k]
		if v := w.objs[k.obj].Attributes[k.attr]; v != "" && v != nv && strings.Count(task.Answer, v) == 1 && strings.Count(ans, v) == 1 {
			ans = strings.Replace(ans, v, nv, 1)
		}
	}
	var facts []string
	for i := range task.RequiredEvidence {
		ev := &task.RequiredEvidence[i]
		f := ev.Text
		for _, k := range keys {
			nv := w.updated[k]
			if v := w.objs[k.obj].Attributes[k.attr]; w.objs[k.obj].ID == ev.Entity && v != "" && v != nv && strings.Count(f, v) == 1 {
				f = strings.Replace(f, v, nv, 1)
			}
		}
		facts = append(facts, f)
	}
	return ans + w.pick(" Evidence: "+strings.Join(facts, "; ")+".", "依据："+strings.Join(facts, "；")+"。")
}

// trackers holds, per conversation, the evidence tracker after its answers so far, keyed by
// a digest of the scene and the answers: the next request of the conversation reads only
// its one new answer (reading them all again made each request's cost grow with the
// conversation's length). Each conversation keeps one entry, its latest.
var trackers sync.Map

func trackerFor(sc *simulate.Scene, task int, msgs []vlm.Message) *simulate.Tracker {
	var answers []string
	for _, m := range msgs {
		if m.Role == vlm.RoleAssistant {
			answers = append(answers, m.Text)
		}
	}
	key := func(n int) string {
		h := sha256.New()
		h.Write([]byte(sc.ID))
		h.Write([]byte{byte(task)})
		for _, a := range answers[:n] {
			h.Write([]byte{0})
			h.Write([]byte(a))
		}
		return string(h.Sum(nil))
	}
	n := len(answers)
	if t, ok := trackers.Load(key(n)); ok {
		return t.(*simulate.Tracker).Clone()
	}
	var tr *simulate.Tracker
	if n > 0 {
		// Stored trackers are never changed (another request may be cloning one): extend a copy.
		if t, ok := trackers.LoadAndDelete(key(n - 1)); ok {
			tr = t.(*simulate.Tracker).Clone()
			tr.Observe(answers[n-1])
		}
	}
	if tr == nil {
		tr = simulate.NewTaskTracker(sc, task)
		for _, a := range answers {
			tr.Observe(a)
		}
	}
	trackers.Store(key(n), tr)
	return tr.Clone()
}

// recognized caches simulate.Recognize: every request carries the whole conversation, so
// each user turn is read again on every later turn of its episode (a quarter of the
// server's time in BenchmarkRun10kTurns before the cache). Bounded, then no longer filled.
var recognized sync.Map

const recognizedMax = 1 << 16

var recognizedN atomic.Int64

func recognize(text string, lang simulate.Language) simulate.Recognized {
	key := string(lang) + "\x00" + text
	if r, ok := recognized.Load(key); ok {
		return r.(simulate.Recognized)
	}
	r := simulate.Recognize(text, lang)
	if recognizedN.Add(1) < recognizedMax {
		recognized.Store(key, r)
	}
	return r
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0
		}
		n = n*10 + int(r-'0')
	}
	return n
}
