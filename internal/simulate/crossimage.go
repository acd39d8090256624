package simulate

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
)

// fillerTurns is the number of filler turns at each difficulty: the document's range of 5 to
// 15, spread over the four levels.
var fillerTurns = [5]int{0, 5, 8, 12, 15}

// ErrNotCrossImage means a scene cannot host the cross-image test: it needs two images that
// hold objects of one type with an attribute whose values differ.
var ErrNotCrossImage = errors.New("no object type appears in two images with differing attribute values")

// crossImage is the document's cross-image memory confusion test, planned in full up front:
// grounding per image, filler turns (count from the difficulty), ambiguous references,
// attribute swaps and long-context recall over the scene's confusable object types (as many
// types as the difficulty, at most all of them).
type crossImage struct {
	steps []Step
	i     int
}

// confusable is one object type found in two images, with the two instances and the
// attribute that tells them apart.
type confusable struct {
	typ  string
	word string // how user turns name the type: the instances' shared name, else the type word
	a, b int    // object indices, a in an earlier image than b
	attr string
}

func newCrossImage(sc *Scene, difficulty int, rng *rand.Rand) (*crossImage, error) {
	k := newKnowledge(sc)
	lang := sc.Language
	conf, count := findConfusable(k)
	if len(conf) == 0 || len(sc.Images) < 2 {
		return nil, ErrNotCrossImage
	}
	difficulty = min(max(difficulty, 1), 4)
	tested := conf[:min(len(conf), difficulty)]

	var opi [][]MetaObject
	for _, list := range sc.ObjectsPerImage {
		objs := make([]MetaObject, 0, len(list))
		for _, o := range list {
			objs = append(objs, MetaObject{ID: o.ID, Type: o.Type, Attributes: o.Attributes})
		}
		opi = append(opi, objs)
	}
	c := &crossImage{}
	yes := true
	add := func(s Step) {
		s.Meta.Language, s.Meta.Phase, s.Meta.ObjectsPerImage = lang, s.Phase, opi
		s.Meta.ConfusableObjects = &count
		c.steps = append(c.steps, s)
	}
	imageWord := func(i int) string { return pick(lang, fmt.Sprintf("Image %d", i+1), fmt.Sprintf("图片%d", i+1)) }
	describeImage := func(i int) string {
		var parts []string
		for oi := range k.objs {
			if k.image[oi] == i {
				parts = append(parts, describeObject(k, oi, lang))
			}
		}
		return imageWord(i) + pick(lang, ": ", "：") + strings.Join(parts, pick(lang, ", ", "，"))
	}

	// Grounding: the opening question, then each image.
	var all []string
	for i := range sc.Images {
		all = append(all, describeImage(i))
	}
	text, _ := render(rng, tplGroundIntro, lang, map[string]string{"n": fmt.Sprint(len(sc.Images))})
	add(Step{Action: ActInitial, Phase: PhaseGrounding, Text: text, Expected: strings.Join(all, pick(lang, "; ", "；"))})
	main, mainWord := tested[0].typ, tested[0].word
	for i := range sc.Images {
		sl := map[string]string{"image": fmt.Sprint(i + 1)}
		key := tplGroundPlain
		entity := ""
		for oi := range k.objs {
			if k.image[oi] == i && k.objs[oi].Type == main {
				key, sl["type"], entity = tplGround, mainWord, k.names[oi]
				break
			}
		}
		text, _ := render(rng, key, lang, sl)
		add(Step{Action: ActGuidance, Phase: PhaseGrounding, Text: text, Expected: describeImage(i),
			Meta: Meta{TargetImage: i + 1, Entity: entity}})
	}

	// Filler: small talk, drawn without repeats.
	fillers := parsed[tplFiller][langIndex(lang)]
	order := rng.Perm(len(fillers))
	for j := 0; j < fillerTurns[difficulty]; j++ {
		t := fillers[order[j%len(order)]]
		add(Step{Action: ActDistraction, Phase: PhaseFillerInjection, Text: t.text,
			Expected: pick(lang, "A short, relevant reply that keeps the earlier image facts intact.", "简短作答，不改变之前建立的图片事实。")})
	}

	// Ambiguous references: the type alone, and a value several images share.
	for _, cf := range tested {
		sl := map[string]string{"type": cf.word, "attribute": attributeName(cf.attr, lang)}
		text, _ := render(rng, templateKey(ActCrossImageConfusion), lang, sl)
		var cands []string
		for oi := range k.objs {
			if k.objs[oi].Type == cf.typ {
				cands = append(cands, imageWord(k.image[oi])+pick(lang, ": ", "：")+displayName(k.objs[oi], lang)+pick(lang, " (", "（")+k.cur[oi][cf.attr]+pick(lang, ")", "）"))
			}
		}
		add(Step{Action: ActCrossImageConfusion, Phase: PhaseAmbiguousReference, Text: text,
			Expected: pick(lang, "Asks which image is meant, listing the candidates: ", "询问指的是哪张图片，并列出候选：") + strings.Join(cands, pick(lang, "; ", "；")),
			Meta:     Meta{Entity: cf.word, Attribute: cf.attr, Ambiguous: &yes}})
	}
	if attr, val, objs := sharedValue(k); len(objs) > 1 {
		text, _ := render(rng, templateKey(ActAmbiguousReference), lang, map[string]string{"value": val})
		var cands []string
		for _, oi := range objs {
			cands = append(cands, imageWord(k.image[oi])+pick(lang, ": ", "：")+displayName(k.objs[oi], lang))
		}
		add(Step{Action: ActAmbiguousReference, Phase: PhaseAmbiguousReference, Text: text,
			Expected: pick(lang, "Flags the ambiguity and asks which is meant: ", "指出指代不明并请求澄清：") + strings.Join(cands, pick(lang, "; ", "；")),
			Meta:     Meta{Attribute: attr, TrueValue: val, Ambiguous: &yes}})
	}

	// Attribute swap: image b's object given image a's value.
	for _, cf := range tested {
		fv, tv := k.cur[cf.a][cf.attr], k.cur[cf.b][cf.attr]
		sl := map[string]string{"type": cf.word, "image": fmt.Sprint(k.image[cf.b] + 1), "false_value": fv}
		text, _ := render(rng, templateKey(ActAttributeSwap), lang, sl)
		add(Step{Action: ActAttributeSwap, Phase: PhaseAttributeSwap, Text: text,
			Expected: pick(lang,
				fmt.Sprintf("No: the %s in %s is %s; the %s one is in %s.", sl["type"], imageWord(k.image[cf.b]), tv, fv, imageWord(k.image[cf.a])),
				fmt.Sprintf("不对：%s里的%s是%s的；%s的%s在%s。", imageWord(k.image[cf.b]), sl["type"], tv, fv, sl["type"], imageWord(k.image[cf.a]))),
			Meta: Meta{Entity: k.names[cf.b], Attribute: cf.attr, FalseValue: fv, TrueValue: tv, TargetImage: k.image[cf.b] + 1, Ambiguous: new(bool)}})
	}

	// Long-context recall of the first grounding facts.
	for _, cf := range tested {
		val := k.cur[cf.a][cf.attr]
		sl := map[string]string{"type": cf.word, "value": val}
		text, _ := render(rng, templateKey(ActLongContextRecall), lang, sl)
		add(Step{Action: ActLongContextRecall, Phase: PhaseLongContextRecall, Text: text,
			Expected: pick(lang, "Recalls it correctly: ", "准确回忆：") + describeImage(k.image[cf.a]),
			Meta:     Meta{Entity: k.names[cf.a], Attribute: cf.attr, TrueValue: val, TargetImage: k.image[cf.a] + 1, Ambiguous: new(bool)}})
	}
	return c, nil
}

func (c *crossImage) planned() int { return len(c.steps) }

func (c *crossImage) next(string) (Step, bool) {
	if c.i >= len(c.steps) {
		return Step{}, false
	}
	c.i++
	return c.steps[c.i-1], true
}

// findConfusable lists the object types found in two or more images, most images first, each
// with a pair of instances that differ in an attribute (color first); count is the number of
// objects whose type is in two or more images (meta.confusable_objects).
func findConfusable(k *knowledge) ([]confusable, int) {
	images := map[string]map[int]bool{}
	for oi, o := range k.objs {
		if images[o.Type] == nil {
			images[o.Type] = map[int]bool{}
		}
		images[o.Type][k.image[oi]] = true
	}
	count := 0
	for _, o := range k.objs {
		if len(images[o.Type]) > 1 {
			count++
		}
	}
	var out []confusable
	types := slices.Sorted(maps.Keys(images))
	slices.SortStableFunc(types, func(a, b string) int { return len(images[b]) - len(images[a]) })
	for _, t := range types {
		if len(images[t]) < 2 {
			continue
		}
		if cf, ok := pairOf(k, t); ok {
			cf.word = typeWord(t, k.lang)
			if na, nb := displayName(k.objs[cf.a], k.lang), displayName(k.objs[cf.b], k.lang); na == nb {
				cf.word = na
			}
			out = append(out, cf)
		}
	}
	return out, count
}

func pairOf(k *knowledge, t string) (confusable, bool) {
	var best confusable
	found := false
	for a := range k.objs {
		for b := range k.objs {
			if k.objs[a].Type != t || k.objs[b].Type != t || k.image[a] >= k.image[b] {
				continue
			}
			for _, attr := range slices.Sorted(maps.Keys(k.cur[a])) {
				vb, ok := k.cur[b][attr]
				if !ok || canonical(vb) == canonical(k.cur[a][attr]) {
					continue
				}
				cf := confusable{typ: t, a: a, b: b, attr: attr}
				if !found || (attr == "color" && best.attr != "color") {
					best, found = cf, true
				}
			}
		}
	}
	return best, found
}

// sharedValue finds an attribute value held by objects of two or more images (for the
// ambiguous reference "the red thing"), color first.
func sharedValue(k *knowledge) (attr, val string, objs []int) {
	type key struct{ attr, canon string }
	groups := map[key][]int{}
	var order []key
	for oi := range k.objs {
		for _, a := range slices.Sorted(maps.Keys(k.cur[oi])) {
			kk := key{a, canonical(k.cur[oi][a])}
			if groups[kk] == nil {
				order = append(order, kk)
			}
			groups[kk] = append(groups[kk], oi)
		}
	}
	slices.SortStableFunc(order, func(a, b key) int {
		ac, bc := a.attr == "color", b.attr == "color"
		switch {
		case ac && !bc:
			return -1
		case bc && !ac:
			return 1
		}
		return 0
	})
	for _, kk := range order {
		g := groups[kk]
		imgs := map[int]bool{}
		for _, oi := range g {
			imgs[k.image[oi]] = true
		}
		if len(imgs) > 1 {
			return kk.attr, k.cur[g[0]][kk.attr], g
		}
	}
	return "", "", nil
}
