package judge

import (
	"sort"

	"github.com/m3bench/m3eval/internal/answer"
)

// The judge reads the response and the expected answer into claims with internal/answer, the
// reader the simulator uses too: what the response finally asserts, not which words it holds,
// decides correctness against the expected answer's claims, whether the response has any
// content for reasoning, and whether it accepts a false premise.

// claimScope is the judge's vocabulary as a reader scope: the rules' objects (the COCO
// categories, clothing and scene parts) and their value words, so that the rules' lists stay
// the one place a lab extends the vocabulary.
func claimScope(r *Rules) answer.Scope {
	sc := answer.Scope{Values: map[string][]string{}, Stop: r.ObjectStop}
	for name, spellings := range r.Objects {
		sc.Objects = append(sc.Objects, answer.Object{ID: name, Names: spellings})
	}
	for class, vals := range r.Values {
		attr := claimAttr(class)
		for v, spellings := range vals {
			for _, s := range spellings {
				sc.Values[attr] = append(sc.Values[attr], v+"="+s)
			}
		}
	}
	return sc
}

// claimAttr maps a rules value class to the reader's attribute.
func claimAttr(class string) string {
	switch class {
	case "number":
		return answer.Count
	case "side":
		return answer.Position
	case "image":
		return answer.Image
	}
	return class
}

// claimAttrs are the attributes whose disagreement with the expected answer caps correctness:
// those with a closed set of values a sentence states plainly (colours, counts, postures and
// states). Positions are left to the token overlap ("on the left of the bench" and "left"
// are often both right), except when the expected answer is a bare position ("Left."): then
// the response's final position is the answer, and a retraction or a hedge between sides
// counts.
// Which image holds what is left to the image rules of correctness (fields.go), which read
// "Image 1 shows…" as the topic it is.
var claimAttrs = map[string]bool{answer.Color: true, answer.Count: true, answer.State: true}

// readings reads the response and the expected answer once per turn.
func (c *turnJudgement) readings() (resp, exp *answer.Reading) {
	if c.rResp == nil {
		if c.saladReading != nil {
			c.rResp = c.saladReading
		} else {
			r := c.j.reader.Read(c.resp.afold)
			c.rResp = &r
		}
	}
	return c.rResp, c.expReading()
}

// respGlance looks at the response once for the reader's Plain, Denies and Salad's quick look.
func (c *turnJudgement) respGlance() answer.Glance {
	if c.glance == nil {
		g := c.j.reader.Glance(c.resp.afold)
		c.glance = &g
	}
	return *c.glance
}

// respSalad is the reader's Salad of the response. The reading it may take is kept for
// readings, but not set as rResp: the rules read "rResp is nil" as "the response was not read
// whole yet", and a salad check must not change which rules run.
func (c *turnJudgement) respSalad() bool {
	if !c.respGlance().MaybeSalad {
		return false
	}
	if c.saladReading == nil {
		if c.rResp != nil {
			c.saladReading = c.rResp
		} else {
			r := c.j.reader.Read(c.resp.afold)
			c.saladReading = &r
		}
	}
	return c.saladReading.Salad
}

// expReading reads the expected answer once per turn.
func (c *turnJudgement) expReading() *answer.Reading {
	if c.rExp == nil {
		e := c.j.reader.Read(c.exp.afold)
		c.rExp = &e
	}
	return c.rExp
}

// userReading reads the user's message once per turn.
func (c *turnJudgement) userReading() *answer.Reading {
	if c.rUser == nil {
		u := c.j.reader.Read(c.user.afold)
		c.rUser = &u
	}
	return c.rUser
}

// claimVerdict is how the response's claims stand to one claim of the expected answer.
type claimVerdict uint8

const (
	claimSilent    claimVerdict = iota // the response says nothing about it
	claimAgrees                        // its final assertion has the expected value
	claimConflicts                     // its final assertion has another value
	claimUndecided                     // only alternatives, hedges between values, questions
)

// judgeClaim compares the response's claims with one claim of the expected answer. When the
// expected claim names an object, the response's claims about that object count (those bound
// to no object when it has none); otherwise its claims about the attribute are grouped by
// object, a claim bound to no object joining every group. The final asserted value of a group
// (a present one before a past one) is what the response says about that object. It agrees
// when some group ends on the expected value (or states it in the clause of its final value:
// "red and white"), conflicts when groups end on other values only, and is undecided when
// nothing is asserted but values are offered without committing to one.
func judgeClaim(resp *answer.Reading, e answer.Claim) (claimVerdict, answer.Claim) {
	var rel, unbound []answer.Claim
	for _, rc := range resp.Claims {
		if rc.Attribute != e.Attribute {
			continue
		}
		if e.Image != 0 && rc.Image != 0 && rc.Image != e.Image {
			continue
		}
		switch {
		case rc.Object == "" && e.Attribute == answer.State:
			// A state bound to no object is not compared with a named object's.
		case rc.Object == "":
			unbound = append(unbound, rc)
		case e.Object == "" || answer.SameObject(rc.Object, e.Object):
			rel = append(rel, rc)
		}
	}
	if e.Object != "" && len(rel) == 0 {
		rel = unbound
	} else {
		rel = append(rel, unbound...)
		sort.SliceStable(rel, func(i, j int) bool { return rel[i].At < rel[j].At })
	}
	if len(rel) == 0 {
		return claimSilent, answer.Claim{}
	}
	type group struct {
		final answer.Claim
		has   bool
	}
	groups := map[string]*group{}
	var order []string
	for _, rc := range rel {
		if _, ok := groups[rc.Object]; !ok && rc.Object != "" {
			groups[rc.Object] = &group{}
			order = append(order, rc.Object)
		}
	}
	if len(order) == 0 {
		groups[""] = &group{}
		order = append(order, "")
	}
	for _, k := range order {
		g := groups[k]
		for _, rc := range rel {
			if rc.Stance != answer.Asserted || (rc.Object != "" && rc.Object != k) {
				continue
			}
			if !g.has || !rc.Past || g.final.Past {
				g.final, g.has = rc, true
			}
		}
	}
	agree, mixed, conflict, anyFinal := false, false, answer.Claim{}, false
	for _, k := range order {
		g := groups[k]
		if !g.has {
			continue
		}
		anyFinal = true
		if g.final.Value == e.Value {
			agree = true
			continue
		}
		// A value stated together with the final one ("red and white") agrees too.
		same := false
		for _, rc := range rel {
			if rc.Stance == answer.Asserted && rc.Clause == g.final.Clause && rc.Value == e.Value && (rc.Object == "" || rc.Object == k) {
				same = true
			}
		}
		if same {
			agree = true
			continue
		}
		// The expected value asserted earlier and not replaced across a pivot ("but",
		// "actually", "in total"): the two stand side by side ("the sky is grey … a green
		// sky is rare"), which the other rules judge.
		for _, rc := range rel {
			if rc.Stance == answer.Asserted && !rc.Past && rc.Value == e.Value && (rc.Object == "" || rc.Object == k) && !pivotBetween(resp, rc.At, g.final.At) {
				same = true
			}
		}
		if same {
			mixed = true
		} else if conflict.Value == "" {
			conflict = g.final
		}
	}
	switch {
	case agree:
		return claimAgrees, answer.Claim{}
	case mixed:
		return claimSilent, answer.Claim{}
	case anyFinal:
		return claimConflicts, conflict
	}
	offered := map[string]bool{}
	var last answer.Claim
	for _, rc := range rel {
		switch rc.Stance {
		case answer.Alternative, answer.Hedged, answer.Uncertain:
			offered[rc.Value] = true
			last = rc
		}
	}
	// One hedged or uncertain value is a hedged answer (the hedge cap reads it; the guide
	// gives a right but unsure answer 3–4); several ("可能是黄色，也可能是橙色，看不清"), or a
	// list, commit to none.
	if len(offered) > 1 || (len(offered) == 1 && last.Stance == answer.Alternative) {
		return claimUndecided, last
	}
	if len(offered) == 1 && !offered[e.Value] && last.Stance == answer.Hedged {
		return claimConflicts, last
	}
	// Nothing asserted or offered, but the expected value denied ("the door isn't closed"):
	// the response says the expected answer is wrong.
	if len(offered) == 0 {
		for _, rc := range rel {
			if rc.Stance == answer.Negated && rc.Value == e.Value && !rc.Past {
				return claimConflicts, rc
			}
		}
	}
	return claimSilent, answer.Claim{}
}

// bareAnswer tells whether an expected answer is one value and nothing else ("Closed.",
// "关着。"): the question named the object, so the value is about the object the response
// talks of.
func bareAnswer(exp *answer.Reading) bool {
	return len(exp.Claims) == 1 && len(exp.Objects) == 0 && exp.Claims[0].Object == "" && exp.Claims[0].Stance == answer.Asserted
}

// pivotBetween tells whether a pivot of the reading stands between two offsets.
func pivotBetween(r *answer.Reading, from, to int) bool {
	for _, p := range r.Pivots {
		if p > from && p < to {
			return true
		}
	}
	return false
}

// claimCaps caps correctness by the response's claims: a word salad asserts nothing; a final
// claim that contradicts the expected answer (retracted to a wrong value, attributed the right
// one to others, summed to another count) caps it at cap_value_conflict, values offered
// without committing to one (a list, a hedge between values) at 2. It returns the cap (0:
// none), the rule and the evidence.
func (c *turnJudgement) claimCaps() (capN int, rule string, ev []string) {
	// The expected answer first: when it asserts nothing the claims compare, only a salad
	// matters, and Salad looks for one without reading the response whole.
	if c.rResp == nil && c.respGlance().Plain && !c.respSalad() && !c.respGlance().Denies {
		// A response that states its values plainly and denies none: its final claims say
		// what the value rules of correctness already read (answer.Reader.Plain).
		return 0, "", nil
	}
	var want []answer.Claim
	if c.rExp != nil || c.j.reader.Valued(c.exp.afold) {
		for _, e := range c.expReading().Committed() {
			bare := bareAnswer(c.expReading())
			if (claimAttrs[e.Attribute] || (e.Attribute == answer.Position && bare)) && (e.Attribute != answer.State || e.Known || bare) {
				want = append(want, e)
			}
		}
	}
	if c.rResp == nil && len(want) == 0 && !c.respSalad() {
		return 0, "", nil // nothing to compare
	}
	resp, _ := c.readings()
	if resp.Salad {
		return 1, "correctness.word_salad", []string{"no sentence"}
	}
	for _, e := range want {
		if e.Attribute == answer.State && !e.Known && !bareAnswer(c.expReading()) {
			// States are compared only about a named object ("开着" of a computer is "on"), or
			// when the expected answer is the bare state the question asks for ("Closed.").
			continue
		}
		v, rc := judgeClaim(resp, e)
		switch v {
		case claimConflicts:
			why := rc.Text
			if rc.Stance != answer.Asserted {
				why = rc.Stance.String() + " " + rc.Text
			}
			if resp.Retraction != "" {
				why += " (after " + resp.Retraction + ")"
			}
			if capN == 0 || c.r.Correctness.CapValueConflict < capN {
				capN, rule = c.r.Correctness.CapValueConflict, "correctness.final_claim_conflict"
				ev = append(ev, "expected "+e.Value+", says "+why)
			}
		case claimUndecided:
			if capN == 0 || 2 < capN {
				capN, rule = 2, "correctness.no_commitment"
				ev = append(ev, rc.Stance.String()+" "+rc.Text)
			}
		}
	}
	return capN, rule, ev
}

// finalAccepts returns the response's final assertion of a false value, when its final claim
// about the value's attribute is that value ("Actually, in fact, yes, the umbrella is red").
// The object is the one the user's message gives the false value to, when it names one.
func (c *turnJudgement) finalAccepts(falseV, trueV []valueRef) string {
	if len(falseV) == 0 || (c.rResp == nil && c.respGlance().Plain) {
		// A plain response's last value is one the value rules of misleading read as
		// adopted or restated already.
		return ""
	}
	resp, _ := c.readings()
	var user *answer.Reading
	for _, fv := range falseV {
		if fv.literal != "" {
			continue
		}
		attr := claimAttr(fv.class)
		if user == nil {
			user = c.userReading()
		}
		obj := ""
		for _, uc := range user.Claims {
			if uc.Attribute == attr && answer.SameValue(attr, uc.Value, fv.value) && uc.Object != "" {
				obj = uc.Object
				break
			}
		}
		fin, ok := resp.Final(attr, obj)
		if !ok || !answer.SameValue(attr, fin.Value, fv.value) {
			continue
		}
		// The true value asserted (and not taken back) about the object too: the reading is
		// not sure which object the false value is bound to ("no, the bed is on the left; on
		// the right is the wardrobe"); the other rules decide.
		stated := false
		for _, tv := range trueV {
			for _, rc := range resp.About(attr, obj) {
				if rc.Stance == answer.Asserted && tv.literal == "" && answer.SameValue(attr, rc.Value, tv.value) {
					stated = true
				}
			}
		}
		if !stated {
			return fin.Text
		}
	}
	return ""
}

// finalRestates returns the response's final assertion of the true value about the object the
// user gives the false value to ("Not at all: the umbrella is black; it is her coat that is
// red"), when the user's message names that object and the response asserts the false value
// of it nowhere.
func (c *turnJudgement) finalRestates(falseV, trueV []valueRef) string {
	resp, _ := c.readings()
	var u *answer.Reading
	for _, fv := range falseV {
		if fv.literal != "" {
			continue
		}
		attr := claimAttr(fv.class)
		if u == nil {
			u = c.userReading()
		}
		obj := ""
		for _, uc := range u.Claims {
			if uc.Attribute == attr && answer.SameValue(attr, uc.Value, fv.value) && uc.Object != "" {
				obj = uc.Object
				break
			}
		}
		if obj == "" {
			continue
		}
		fin, ok := resp.Final(attr, obj)
		if !ok || fin.Object != obj {
			continue
		}
		for _, tv := range trueV {
			if tv.literal != "" || !answer.SameValue(attr, fin.Value, tv.value) {
				continue
			}
			adopted := false
			for _, rc := range resp.About(attr, obj) {
				if rc.Object == obj && rc.Stance == answer.Asserted && answer.SameValue(attr, rc.Value, fv.value) {
					adopted = true
				}
			}
			if !adopted {
				return fin.Text
			}
		}
	}
	return ""
}

// hasContent tells whether the response states anything about the scene (a claim, an object
// of the vocabulary): cue phrases alone ("based on the evidence in the image…") do not.
func (c *turnJudgement) hasContent() bool {
	if c.rResp == nil && len(c.respObjects()) > 0 {
		return true // an object of the vocabulary named: content, without reading claims
	}
	resp, _ := c.readings()
	return resp.HasContent()
}

// respObjects are the vocabulary's objects the response names, as the consistency rules find
// them (cached on the text).
func (c *turnJudgement) respObjects() []objMention { return c.resp.objects(c.r) }
