package simulate_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/simulate"
	"github.com/m3bench/m3eval/internal/vlm"
)

// heldoutAnswer is a labeled natural answer of testdata/natural/heldout.jsonl (the fields
// this test needs).
type heldoutAnswer struct {
	Scene    string `json:"scene"`
	Answer   string `json:"answer"`
	Correct  bool   `json:"correct"`
	Evidence []string
	State    []json.RawMessage `json:"state"`
}

// naturalServer is issue #36's reproduction: an OpenAI-compatible server on 127.0.0.1 that
// answers every user turn in ordinary sentences, the correct held-out answers of the scene in
// turn (hedges, negations, lists, self-corrections, attributions among them), instead of the
// demo personas' templates.
func naturalServer(t *testing.T, answers []heldoutAnswer) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		model, msgs, err := vlm.DecodeRequest(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n := 0
		for _, m := range msgs {
			if m.Role == vlm.RoleAssistant {
				n++
			}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "natural", "object": "chat.completion", "model": model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": answers[n%len(answers)].Answer}}}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

var (
	quotedStatementRE = regexp.MustCompile(`^You mentioned earlier: (.+)\. Can you repeat that\?$|^你之前提到(.+)，能重复一下吗？$`)
	youSaidRE         = regexp.MustCompile(`^You said the .+? (?:is|are) (.+?)\. Just to confirm|^刚才说过.+?是(.+?)，再确认一下`)
	whyRE             = regexp.MustCompile(`^Why do you think the .+? (?:is|are) (.+)\?$|^为什么你认为.+?是(.+)的？$`)
)

// The simulator against a model that answers in ordinary sentences (#36): a model whose every
// answer is correct for the scene is never corrected before the scene changes, and no
// redundancy or follow-up turn says the model said what none of its asserting answers said.
func TestNaturalAnswersOverHTTP(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "natural", "heldout.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byScene := map[string][]heldoutAnswer{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var a heldoutAnswer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		if a.Correct && len(a.State) == 0 {
			byScene[a.Scene] = append(byScene[a.Scene], a)
		}
	}
	scenes := loadDemo(t)
	checked := map[string]int{}
	for i := range scenes {
		sc := scenes[i]
		answers := byScene[sc.ID]
		if sc.Task == nil || len(answers) == 0 {
			continue
		}
		url := naturalServer(t, answers)
		out, _, err := run(t, []simulate.Scene{sc}, client(t, url, "natural", nil), "natural", func(o *simulate.Options) {
			o.Strategies, o.Turns = []simulate.Strategy{simulate.StrategyRules}, 20
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, ep := range byEpisode(readTurns(t, out)) {
			var said []heldoutAnswer // the answers given so far
			updated := false
			for _, r := range ep {
				switch r.ActionType {
				case simulate.ActUpdate:
					updated = true
				case simulate.ActNegation:
					checked["negation"]++
					if !updated {
						t.Errorf("%s turn %d corrected a correct answer: %q after %q", r.EpisodeID, r.Turn, r.UserMessage, said[len(said)-1].Answer)
					}
				case simulate.ActRedundancy, simulate.ActFollowUp:
					quote := ""
					for _, re := range []*regexp.Regexp{quotedStatementRE, youSaidRE, whyRE} {
						if m := re.FindStringSubmatch(r.UserMessage); m != nil {
							quote = strings.ToLower(m[1] + m[2])
						}
					}
					if quote == "" {
						break
					}
					checked[string(r.ActionType)]++
					// A redundancy turn quotes evidence of its object and attribute: some
					// earlier answer labeled as asserting that evidence states the quote. A
					// follow-up's value was said by some earlier answer.
					ids := evidenceOf(&sc, r.Meta.Entity, r.Meta.Attribute)
					if !slices.ContainsFunc(said, func(a heldoutAnswer) bool {
						return strings.Contains(strings.ToLower(a.Answer), quote) &&
							(r.ActionType == simulate.ActFollowUp || slices.ContainsFunc(a.Evidence, func(id string) bool { return slices.Contains(ids, id) }))
					}) {
						t.Errorf("%s turn %d quotes %q, which no asserting answer said: %q", r.EpisodeID, r.Turn, quote, r.UserMessage)
					}
				}
				said = append(said, heldoutAnswer{Answer: r.VLMResponse, Evidence: answerEvidence(answers, r.VLMResponse)})
			}
		}
	}
	t.Logf("checked: %v", checked)
	if checked["redundancy"]+checked["follow_up"] == 0 {
		t.Error("no redundancy or follow-up turn quoted the model: the test checked nothing")
	}
}

// evidenceOf lists the ids of the scene's evidence (any task) about the object user turns
// call name, of the attribute (any when "").
func evidenceOf(sc *simulate.Scene, name, attr string) []string {
	var ids []string
	names := simulate.QualifiedNames(sc)
	for _, t := range sc.Tasks() {
		for _, ev := range t.RequiredEvidence {
			n := 0
			for _, list := range sc.ObjectsPerImage {
				for i := range list {
					if list[i].ID == ev.Entity && names[n] == name && (attr == "" || ev.Attribute == attr) {
						ids = append(ids, ev.ID)
					}
					n++
				}
			}
		}
	}
	return ids
}

// answerEvidence is the labeled evidence of the served answer text.
func answerEvidence(answers []heldoutAnswer, text string) []string {
	for _, a := range answers {
		if a.Answer == text {
			return a.Evidence
		}
	}
	return nil
}

// The faithful demo persona answers the apples scene's second task (#36): its question ("What
// color is the plate, and what color is the cup?") fits the cross-image template "What
// {attribute} is the {type}?", and the persona used to answer "I don't see one."
func TestFaithfulAnswersSecondTask(t *testing.T) {
	scenes := loadDemo(t)
	srv, _ := demoServer(t, scenes)
	var apples []simulate.Scene
	for _, sc := range scenes {
		if sc.ID == "apples_en" {
			apples = append(apples, sc)
		}
	}
	out, _, err := run(t, apples, client(t, srv.URL, "faithful", nil), "faithful", func(o *simulate.Options) {
		o.Strategies = []simulate.Strategy{simulate.StrategyRules}
	})
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	for _, r := range readTurns(t, out) {
		if r.UserMessage != apples[0].NextTasks[0].Question {
			continue
		}
		asked++
		// White and green, or what an update of the second task made them.
		if !regexp.MustCompile(`^The plate is \w+ and the cup is \w+\. Evidence: `).MatchString(r.VLMResponse) {
			t.Errorf("turn %d: %q answered %q", r.Turn, r.UserMessage, r.VLMResponse)
		}
	}
	if asked == 0 {
		t.Fatal("the second task's question was never asked")
	}
}
