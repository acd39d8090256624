// Package answer reads what a vision-language model said: one response, English or Chinese,
// into claims. A claim is a value stated about an attribute of an object in an image ("the cup
// in image 2 is green": image 2, object cup, attribute color, value green) together with its
// stance: asserted, negated, questioned, hedged, uncertain, listed among alternatives,
// attributed to others, or retracted by a later clause. The simulator (internal/simulate) and
// the rule judge (internal/judge) both decide from these claims, so they share one set of word
// lists and one set of binding rules instead of each reading the answer as a bag of words.
//
// # Using it
//
//	sc := answer.Scope{Language: answer.English, Images: 2, Image: 1, Objects: objs}
//	r := answer.Read("The cup next to the apples is green.", sc)
//	c, ok := r.Final(answer.Color, "cup") // c.Value == "green", c.Stance == answer.Asserted
//
// The Scope is the vocabulary of one turn: the scene's objects with their names, aliases and
// attribute values (so a scene value such as 树干右边 or 收起 is read as a value), the number
// of images, the image a claim belongs to when the text names none, and the language. An empty
// Scope still reads the built-in values (colours, counts, positions, sizes, common states) and
// keeps an unknown noun phrase ("the umbrella") as the claim's object.
//
// # What the reader does
//
//   - Clauses are cut at sentence and clause punctuation and before contrast words ("but",
//     "但是"); a claim's stance comes from the cues of its clause (negation before the value,
//     a hedge, a question) and of its sentence (uncertainty: "I still need to check whether…",
//     attribution: "people often assume…").
//   - Values bind to objects by grammatical scope, not distance: an attributive value binds to
//     the noun it modifies ("a red car", "六个苹果", "红色的车"), a predicative one to the
//     clause's subject, which is the first object not inside a prepositional phrase in English
//     ("the cup next to the apples is green" is about the cup) and the head noun before the
//     copula in Chinese ("苹果旁边的杯子是绿色的"); a pronoun or a bare value continues the last
//     subject. Values and objects are matched longest first, a value before an object of the
//     same span, so a value that holds an object's name (树干右边) stays a value.
//   - Counts are read in digits, English number words and Chinese numerals (with a measure
//     word: 三个, 两只); images in "Image 2", "the second/last image", 图2, 图片2, 第二张图.
//   - A retraction cue ("just kidding", "I was wrong", "说错了") retracts every earlier claim;
//     three or more values of one attribute of one object in a sentence, or two joined by "or"
//     (或, 还是), are alternatives that commit to none.
//   - A claim in a clause with "was", "were", "原来" is about an earlier state (Claim.Past);
//     the words after which a later value replaces an earlier one ("but", "actually", "so …
//     in total", "其实", "一共") are the Reading's Pivots.
//   - Final returns the last asserted claim about an attribute of an object, one about the
//     present before one about the past: what the model says once it has finished saying it.
//     Committed lists the final claim of every object and attribute.
//
// For the many texts a judge reads, Reader.Plain, Reader.Valued and Reader.Salad answer from
// the words alone, much faster than Read: whether a text could hold a stance other than
// asserted or negated (or a list), whether it holds a value at all, whether it is a salad.
//
// Chinese has no spaces. A general segmenter (gse, jieba ports) ships dictionaries of tens of
// megabytes and cuts words the binding does not need; what binding needs is the scene's and
// the lexicon's own words, so the reader matches those longest first, character by character,
// by hand (scan.go). Width folding uses golang.org/x/text/width.
package answer
