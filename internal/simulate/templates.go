package simulate

import (
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/jinzhu/inflection"
)

// Action is the action type a user turn carries (the action-space document's names, as in
// annotations/actions.json).
type Action string

// The actions the strategies choose.
const (
	ActInitial             Action = "initial" // the opening question and the direct question
	ActFollowUp            Action = "follow_up"
	ActLogicSkip           Action = "logic_skip"
	ActNegation            Action = "negation"
	ActGuidance            Action = "guidance"
	ActMislead             Action = "mislead"
	ActUpdate              Action = "update"
	ActDistraction         Action = "distraction"
	ActRedundancy          Action = "redundancy"
	ActFineGrained         Action = "fine_grained"
	ActNextTask            Action = "next_task"
	ActCrossImageConfusion Action = "cross_image_confusion"
	ActAmbiguousReference  Action = "ambiguous_reference"
	ActAttributeSwap       Action = "attribute_swap"
	ActLongContextRecall   Action = "long_context_recall"
)

// templateKey names a template list. Most are an action's own; the opening question, the
// direct question, grounding and filler turns have their own lists.
type templateKey string

const (
	tplOpening      templateKey = "opening"
	tplOpeningMulti templateKey = "opening_multi"
	tplDirect       templateKey = "direct"
	tplGroundIntro  templateKey = "grounding_intro"
	tplGround       templateKey = "grounding"
	tplGroundPlain  templateKey = "grounding_plain"
	tplFiller       templateKey = "filler"
	tplIrrelevantQ  templateKey = "irrelevant_question"
)

// templates holds every user-turn template, Chinese (the document's wording where it gives
// one) and English (ours, of the same intent). Placeholders are {name}.
var templates = map[templateKey]struct{ en, zh []string }{
	templateKey(ActFollowUp): {
		en: []string{"You mentioned the {entity}. How {is} {it} related to {target}?", "About the {entity}: can you describe {it} in more detail?", "Where in the image {is} the {entity}?", "Why do you think the {entity} {is} {description}?"},
		zh: []string{"你提到了{entity}，它和{target}有什么关系？", "关于{entity}，你能详细描述一下吗？", "{entity}在图中的哪个位置？", "为什么你认为{entity}是{description}的？"},
	},
	templateKey(ActLogicSkip): {
		en: []string{"Just tell me the answer, no explanation needed.", "Just give me the conclusion.", "I only want the answer; skip the reasoning."},
		zh: []string{"直接告诉我答案，不需要解释。", "简单说一下结论就行。", "我只要答案，省略推理过程。"},
	},
	templateKey(ActNegation): {
		en: []string{"That's not right: the {entity}'s {attribute} should be {correct_value}.", "You're wrong, actually the {entity} {is} {correct_value}.", "That's not accurate: the {entity}'s {attribute} is not {wrong_value}."},
		zh: []string{"不对，{entity}的{attribute}应该是{correct_value}。", "你说错了，实际上{entity}是{correct_value}。", "这不准确，{entity}的{attribute}并不是{wrong_value}。"},
	},
	templateKey(ActGuidance): {
		en: []string{"Pay attention to the {region} part of the image.", "Look at the surroundings of the {entity}.", "Focus on the {entity}'s {attribute}.", "Try looking at it from the angle of {perspective}."},
		zh: []string{"注意图中{region}的部分。", "看看{entity}周围的环境。", "关注{entity}的{attribute}。", "试着从{perspective}的角度观察。"},
	},
	templateKey(ActMislead): {
		en: []string{"I think the {entity} {is} {wrong_value}, right?", "The image shows the {entity} {is} {wrong_value}, doesn't it?", "The {entity} {looks} {wrong_value}."},
		zh: []string{"我觉得{entity}应该是{wrong_value}，对吗？", "图中显示{entity}是{wrong_value}吧？", "{entity}看起来像是{wrong_value}。"},
	},
	templateKey(ActUpdate): {
		en: []string{"Now the {entity}'s {attribute} has changed to {new_value}.", "Note that the {entity} {has} changed; {it_is} now {new_value}.", "The {entity} {was} {old_value} a moment ago, but now {it_is} {new_value}."},
		zh: []string{"现在{entity}的{attribute}变成了{new_value}。", "注意，{entity}已经改变了，现在是{new_value}。", "{entity}刚才是{old_value}，但现在变成{new_value}了。"},
	},
	templateKey(ActDistraction): {
		en: []string{"By the way, how many {irrelevant_entity} things are in the image?", "Oh, and what color is the {irrelevant_entity}?", "Also, {irrelevant_question}"},
		zh: []string{"顺便问一下，图中有几个{irrelevant_entity}？", "对了，{irrelevant_entity}是什么颜色的？", "另外，{irrelevant_question}"},
	},
	tplIrrelevantQ: {
		en: []string{"what color is the {irrelevant_entity}?"},
		zh: []string{"{irrelevant_entity}是什么颜色的？"},
	},
	// The document's first redundancy template reads "{entity}是{attribute}" where it means the
	// value; {value} says so.
	templateKey(ActRedundancy): {
		en: []string{"You said the {entity} {is} {value}. Just to confirm, {is} the {entity} really {value}?", "You mentioned earlier: {statement}. Can you repeat that?", "You already told me about the {entity}'s {attribute}, but I'd like to hear it again."},
		zh: []string{"刚才说过{entity}是{value}，再确认一下，{entity}真的是{value}吗？", "你之前提到{statement}，能重复一下吗？", "关于{entity}的{attribute}，你已经说过了，但我想再听一次。"},
	},
	templateKey(ActFineGrained): {
		en: []string{"Please point out exactly which {entity} in the image you mean.", "Can you mark the exact position of the {entity}?", "What exactly is the {entity}'s {attribute}?", "Please describe the {entity}'s {attribute} precisely, not in general terms."},
		zh: []string{"请指出具体是图中哪一个{entity}。", "能标注一下{entity}的准确位置吗？", "{entity}的{attribute}具体是多少？", "请精确描述{entity}的{attribute}，不要笼统概括。"},
	},
	templateKey(ActNextTask): {
		en: []string{"Let's move on to a new task: {question}", "Next task: {question}"},
		zh: []string{"我们换一个任务：{question}", "下一个任务：{question}"},
	},
	tplOpening: {
		en: []string{"What is in the image?", "Please describe this image."},
		zh: []string{"图中有什么？", "请描述一下这张图片。"},
	},
	tplOpeningMulti: {
		en: []string{"What is in each of these {n} images?"},
		zh: []string{"这{n}张图片中分别有什么？"},
	},
	tplDirect: {en: []string{"{question}"}, zh: []string{"{question}"}},
	tplGroundIntro: {
		en: []string{"Here are {n} images. Describe what you see in each image."},
		zh: []string{"这里有{n}张图片，请分别描述每张图片中的内容。"},
	},
	tplGround: {
		en: []string{"Look at Image {image}. What is the {type} there like?", "Now Image {image}: what about the {type} there?"},
		zh: []string{"看看图片{image}，里面的{type}是什么样的？", "现在看图片{image}，里面的{type}呢？"},
	},
	tplGroundPlain: {
		en: []string{"Look at Image {image}. What is in it?"},
		zh: []string{"看看图片{image}，里面有什么？"},
	},
	templateKey(ActCrossImageConfusion): {
		en: []string{"That {type}, what is its {attribute}?", "What {attribute} is the {type}?"},
		zh: []string{"那个{type}，它的{attribute}是什么？", "那个{type}是什么{attribute}的？"},
	},
	templateKey(ActAmbiguousReference): {
		en: []string{"What is the {value} thing in the picture?", "Where is the {value} one?"},
		zh: []string{"图中{value}的那个东西是什么？", "那个{value}的东西在哪里？"},
	},
	templateKey(ActAttributeSwap): {
		en: []string{"You said earlier that the {type} in Image {image} was {false_value}, right?", "So the {type} in Image {image} is {false_value}, as you said?"},
		zh: []string{"你刚才说图片{image}里的{type}是{false_value}的，对吧？", "所以图片{image}里的{type}是{false_value}的，你之前是这么说的吧？"},
	},
	templateKey(ActLongContextRecall): {
		en: []string{"Going back to the very beginning: which image had the {value} {type}, and where was it?", "Remember the {value} {type} from the start? Which image was it in?"},
		zh: []string{"回到最开始：哪张图片里有{value}的{type}？它在什么位置？", "还记得最开始那个{value}的{type}吗？它在哪张图片里？"},
	},
	// Filler turns (the document's context padder): small talk about the images that asks
	// for none of the facts under test.
	tplFiller: {
		en: []string{
			"By the way, what season do you think these photos were taken in?",
			"What do you think the photographer wanted to show?",
			"How is the lighting in these pictures?",
			"If you gave this set of pictures a title, what would it be?",
			"What kind of city do these scenes remind you of?",
			"Do you think these photos were taken with a phone?",
			"Is the overall tone of these pictures warm or cool?",
			"Are scenes like this common in everyday life?",
			"If these pictures illustrated an article, what would its topic be?",
			"What time of day do you think it is in the pictures?",
			"What do you notice about the composition of these pictures?",
			"Do the pictures look high resolution to you?",
			"Would these places be nice for a walk?",
			"Which picture do you like best, and why?",
			"Is the weather in these photos good for going out?",
			"If you were there, what would you notice first?",
		},
		zh: []string{
			"顺便问一下，这些照片大概是什么季节拍的？",
			"你觉得拍这些照片的人想表达什么？",
			"这些图片的光线怎么样？",
			"如果给这组图片起个标题，你会叫它什么？",
			"这些场景让你想到什么样的城市？",
			"你觉得这些照片是用手机拍的吗？",
			"这些图片的整体色调是暖色还是冷色？",
			"这种场景在日常生活中常见吗？",
			"如果要把这些图片用在一篇文章里，适合什么主题？",
			"你觉得图片里大概是一天中的什么时候？",
			"这些图片的构图有什么特点？",
			"这些图片的分辨率看起来高吗？",
			"这些地方适合散步吗？",
			"你最喜欢哪一张图片，为什么？",
			"这些照片里的天气适合出门吗？",
			"如果你在现场，你会先注意到什么？",
		},
	},
}

// template is a parsed template: literal text and placeholder names, alternating.
type template struct {
	text  string
	parts []string // even: literal, odd: placeholder name
}

func parseTemplate(s string) template {
	t := template{text: s}
	for {
		i := strings.IndexByte(s, '{')
		j := strings.IndexByte(s, '}')
		if i < 0 || j < i {
			t.parts = append(t.parts, s)
			return t
		}
		t.parts = append(t.parts, s[:i], s[i+1:j])
		s = s[j+1:]
	}
}

// agreement are the placeholders of English templates that agree in number with the
// object the turn names ("the apples are", "the cup is"): singular and plural forms.
var agreement = map[string][2]string{
	"is": {"is", "are"}, "has": {"has", "have"}, "was": {"was", "were"}, "looks": {"looks", "look"},
	"it": {"it", "they"}, "it_is": {"it is", "they are"},
}

// agree fills the agreement placeholders for the object the slots name (entity, or
// irrelevant_entity): plural when the name's last word is a plural noun (its singular, by
// github.com/jinzhu/inflection, differs: "apples", "people"). Slots already set are kept.
func agree(slots map[string]string) {
	name := slots["entity"]
	if name == "" {
		name = slots["irrelevant_entity"]
	}
	if name == "" {
		return
	}
	words := strings.Fields(name)
	last := strings.ToLower(words[len(words)-1])
	n := 0
	if plural(last) {
		n = 1
	}
	for k, forms := range agreement {
		if slots[k] == "" {
			slots[k] = forms[n]
		}
	}
}

// Be is the English copula that agrees with an object's name: "are" for "apples", "is" for
// "cup" (the demo personas' answers use it too).
func Be(name string) string {
	slots := map[string]string{"entity": name}
	agree(slots)
	return slots["is"]
}

// plurals remembers which words are plural nouns (inflection's rules are regular
// expressions, and a conversation names the same few objects again and again).
var plurals sync.Map

func plural(w string) bool {
	if p, ok := plurals.Load(w); ok {
		return p.(bool)
	}
	p := inflection.Singular(w) != w
	plurals.Store(w, p)
	return p
}

// fillable reports whether every placeholder has a value.
func (t *template) fillable(slots map[string]string) bool {
	for i := 1; i < len(t.parts); i += 2 {
		if slots[t.parts[i]] == "" {
			return false
		}
	}
	return true
}

func (t *template) fill(slots map[string]string) string {
	var b strings.Builder
	for i, p := range t.parts {
		if i%2 == 0 {
			b.WriteString(p)
		} else {
			b.WriteString(slots[p])
		}
	}
	return b.String()
}

var parsed = func() map[templateKey][2][]template {
	out := map[templateKey][2][]template{}
	for k, v := range templates {
		var pair [2][]template
		for _, s := range v.en {
			pair[0] = append(pair[0], parseTemplate(s))
		}
		for _, s := range v.zh {
			pair[1] = append(pair[1], parseTemplate(s))
		}
		out[k] = pair
	}
	return out
}()

// render fills a template of the list, chosen with rng among those whose placeholders all
// have values. ok is false when none has.
func render(rng *rand.Rand, key templateKey, lang Language, slots map[string]string) (string, bool) {
	if slots != nil {
		agree(slots)
	}
	list := parsed[key][langIndex(lang)]
	var cand [16]int
	n := 0
	for i := range list {
		if list[i].fillable(slots) && n < len(cand) {
			cand[n] = i
			n++
		}
	}
	if n == 0 {
		return "", false
	}
	t := &list[cand[rng.IntN(n)]]
	return t.fill(slots), true
}

// renderOneOf fills one of the templates of the list at the indices allowed (the first
// fillable one if none of them is), chosen with rng.
func renderOneOf(rng *rand.Rand, key templateKey, lang Language, slots map[string]string, allowed []int) string {
	agree(slots)
	list := parsed[key][langIndex(lang)]
	var cand []int
	for _, i := range allowed {
		if i < len(list) && list[i].fillable(slots) {
			cand = append(cand, i)
		}
	}
	if len(cand) == 0 {
		text, _ := render(rng, key, lang, slots)
		return text
	}
	return list[cand[rng.IntN(len(cand))]].fill(slots)
}

func langIndex(l Language) int {
	if l == Chinese {
		return 1
	}
	return 0
}

// pick returns the English or the Chinese text.
func pick(l Language, en, zh string) string {
	if l == Chinese {
		return zh
	}
	return en
}
