package illusion

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// TestSet is a built test set as the lab's lmms-eval task sees it: the documents its
// process_docs keeps, in order, their doc_id being the position.
type TestSet struct {
	Split string
	Path  string
	Docs  []ImageName
	// Names are the documents' image_name values as written, Truth what the task derives
	// from them (shape_gt, scene_gt); both parallel Docs.
	Names []string
	Truth []TaskTruth
	// Dropped counts rows the task's process_docs drops (no difficulty token, empty shape
	// or scene), so doc_ids count only the others.
	Dropped int
	// Loose counts documents the task keeps whose name lacks m3eval's index or version
	// part; their shape and scene are the task's.
	Loose int
}

// LoadTestSet reads a test-set file (Parquet or JSONL) and numbers its documents exactly
// as the task's process_docs does (see ParseTaskImageName).
func LoadTestSet(ctx context.Context, split, path string) (*TestSet, error) {
	format, err := DetectFormat(path)
	if err != nil {
		return nil, err
	}
	names, err := ReadNames(ctx, []string{path}, format)
	if err != nil {
		return nil, err
	}
	ts := &TestSet{Split: split, Path: path}
	for _, s := range names {
		tt, err := ParseTaskImageName(s)
		if err != nil {
			ts.Dropped++
			continue
		}
		n, err := ParseImageName(s)
		if err != nil {
			ts.Loose++
			n = ImageName{Shape: tt.Shape, Scene: tt.Scene, DifficultyText: tt.Difficulty,
				Difficulty: ParseDifficulty("-" + tt.Difficulty + "-")}
		}
		ts.Docs = append(ts.Docs, n)
		ts.Names = append(ts.Names, s)
		ts.Truth = append(ts.Truth, tt)
	}
	return ts, nil
}

// LogInput is a sample log to score; Split may be empty to infer it from the task name.
type LogInput struct {
	Split string
	Path  string
}

// Rule is the matching rule that decides whether a response names the ground truth.
type Rule string

// The scoring rules: m3eval's (normalized text, both spellings of Stationery) and the
// upstream task's own _recall_match.
const (
	RuleM3eval   Rule = "m3eval"
	RuleLMMSEval Rule = "lmms-eval"
)

// ScoreOptions are the choices of ScoreLogs.
type ScoreOptions struct {
	// Kind scores every log as shape or scene; empty infers it per log (Log.Kinds).
	Kind Kind
	// Pool scores several logs of the same task and split together; Latest keeps only the
	// newest of them by the date in the file name. Without either, such logs are an error.
	Pool, Latest bool
	// Rule is the matching rule; empty means RuleM3eval.
	Rule Rule
}

// LogInfo describes one log given to ScoreLogs, for the report.
type LogInfo struct {
	Path    string `json:"path"`
	Model   string `json:"model"`
	Task    string `json:"task"`
	Split   string `json:"split"`
	Date    string `json:"date"`
	Samples int    `json:"samples"`
	// Skipped says why the log was not scored ("" when it was).
	Skipped string `json:"skipped,omitempty"`
}

// ScoreResult holds the scored items and what the user should know about them.
type ScoreResult struct {
	Items    []Item
	Logs     []LogInfo
	Warnings []string
	Notes    []string
}

// isResultsFile tells lmms-eval's aggregated {date}_results.json from a sample log.
func isResultsFile(path string) bool {
	return strings.HasSuffix(filepath.Base(path), "_results.json")
}

// ScoreLogs scores sample logs against test sets. Each log's split is the one given, else
// the test set whose short name appears in the task name, else the only test set; its
// kinds (shape, scene or both) are opts.Kind when not empty, else inferred by Log.Kinds. A
// log that keeps each doc may be scored without a test set; when both are there they must
// agree, which catches a log scored against the wrong test set. Two logs of one task and
// split (a rerun, another model: lmms-eval writes a new file per run into the same folder)
// are an error unless opts.Pool or opts.Latest.
func ScoreLogs(ctx context.Context, sets []*TestSet, logs []LogInput, opts ScoreOptions) (*ScoreResult, error) {
	bySplit := map[string]*TestSet{}
	var splitNames []string
	for _, ts := range sets {
		bySplit[ts.Split] = ts
		splitNames = append(splitNames, ts.Split)
	}
	res := &ScoreResult{}
	for _, ts := range sets {
		if ts.Dropped > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %d rows have an image_name the task's process_docs drops; doc_ids skip them as the task does", ts.Path, ts.Dropped))
		}
		if ts.Loose > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: %d documents have an image_name without an index or version part; the task keeps them and so does m3eval, with the task's shape and scene", ts.Path, ts.Loose))
		}
	}
	type loaded struct {
		lg    *Log
		split string
		info  int // index in res.Logs
	}
	var all []loaded
	for _, in := range logs {
		if isResultsFile(in.Path) {
			res.Logs = append(res.Logs, LogInfo{Path: in.Path, Model: filepath.Base(filepath.Dir(in.Path)), Skipped: "aggregated results, not samples"})
			res.Notes = append(res.Notes, fmt.Sprintf("skipped %s: an lmms-eval results file (aggregated metrics, no samples)", in.Path))
			continue
		}
		lg, err := ReadLog(ctx, in.Path)
		if err != nil {
			return nil, err
		}
		split := in.Split
		if split == "" {
			split = lg.SplitOf(splitNames)
		}
		if split == "" && len(sets) == 1 {
			split = sets[0].Split
		}
		if split == "" {
			return nil, fmt.Errorf("%s: cannot tell the split from task %q; write SPLIT=%s", in.Path, lg.Task, in.Path)
		}
		res.Logs = append(res.Logs, LogInfo{Path: lg.Path, Model: lg.Model, Task: lg.Task, Split: split, Date: lg.Date, Samples: len(lg.Records)})
		all = append(all, loaded{lg, split, len(res.Logs) - 1})
	}
	// Group the logs by task and split, in order of first appearance.
	type key struct{ task, split string }
	groups := map[key][]int{}
	var order []key
	for i, l := range all {
		k := key{l.lg.Task, l.split}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	use := make([]bool, len(all))
	for _, k := range order {
		g := groups[k]
		if len(g) == 1 || opts.Pool {
			for _, i := range g {
				use[i] = true
			}
			continue
		}
		var desc []string
		for _, i := range g {
			desc = append(desc, fmt.Sprintf("%s (model %s, %d samples)", all[i].lg.Path, all[i].lg.Model, len(all[i].lg.Records)))
		}
		if !opts.Latest {
			return nil, fmt.Errorf("%d logs of task %s, split %s: %s; scoring them together would count each document more than once: pass --latest to keep the newest by the date in its file name, or --pool to score them together", len(g), k.task, k.split, strings.Join(desc, ", "))
		}
		newest := g[0]
		for _, i := range g[1:] {
			if all[i].lg.Date > all[newest].lg.Date {
				newest = i
			}
		}
		for _, i := range g {
			if i != newest && all[i].lg.Date == all[newest].lg.Date {
				return nil, fmt.Errorf("--latest: %s and %s have the same date %q in their file names; give only the one to score", all[i].lg.Path, all[newest].lg.Path, all[newest].lg.Date)
			}
		}
		use[newest] = true
		for _, i := range g {
			if i != newest {
				res.Logs[all[i].info].Skipped = "older than " + all[newest].lg.Path + " (--latest)"
			}
		}
	}
	for i, l := range all {
		if !use[i] {
			continue
		}
		ts := bySplit[l.split]
		kinds := []Kind{opts.Kind}
		if opts.Kind == "" {
			kinds = l.lg.Kinds()
		}
		if len(kinds) == 0 {
			return nil, fmt.Errorf("%s: cannot tell shape from scene (no shape_recall or scene_recall key, no 'shape' or 'scene' in task %q); use --kind", l.lg.Path, l.lg.Task)
		}
		items, warns, err := scoreLog(l.lg, l.split, ts, kinds, opts.Rule)
		if err != nil {
			return nil, err
		}
		res.Items = append(res.Items, items...)
		res.Warnings = append(res.Warnings, warns...)
	}
	return res, nil
}

// join finds the document of each record and checks it against what the log itself says
// of its document (doc.image_name, doc.shape_gt, doc.scene_gt, input_media).
func join(lg *Log, split string, ts *TestSet) ([]ImageName, []TaskTruth, error) {
	seen := map[int]string{}
	names := make([]ImageName, len(lg.Records))
	truth := make([]TaskTruth, len(lg.Records))
	for i, r := range lg.Records {
		if prev, dup := seen[r.DocID]; dup {
			return nil, nil, fmt.Errorf("%s: field doc_id: %d already at %s", r.Where, r.DocID, prev)
		}
		seen[r.DocID] = r.Where
		switch {
		case ts != nil:
			if r.DocID >= len(ts.Docs) {
				return nil, nil, fmt.Errorf("%s: field doc_id: %d is out of range; test set %s has %d documents", r.Where, r.DocID, ts.Path, len(ts.Docs))
			}
			names[i], truth[i] = ts.Docs[r.DocID], ts.Truth[r.DocID]
			want := ts.Names[r.DocID]
			mismatch := func(field, got, doc string) error {
				return fmt.Errorf("%s: field %s: %q, but doc %d of %s is %q (scored against the wrong test set, or a test set numbered differently from the task?)", r.Where, field, got, r.DocID, ts.Path, doc)
			}
			if r.ImageName != "" && r.ImageName != want {
				return nil, nil, mismatch("doc.image_name", r.ImageName, want)
			}
			if r.ShapeGT != "" && r.ShapeGT != truth[i].Shape {
				return nil, nil, mismatch("doc.shape_gt", r.ShapeGT, want)
			}
			if r.SceneGT != "" && r.SceneGT != truth[i].Scene {
				return nil, nil, mismatch("doc.scene_gt", r.SceneGT, want)
			}
			if m, ok := mediaMismatch(r.InputMedia, want); ok {
				return nil, nil, mismatch("input_media", m, want)
			}
		case r.ImageName != "":
			tt, err := ParseTaskImageName(r.ImageName)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: field doc.image_name: %w", r.Where, err)
			}
			n, err := ParseImageName(r.ImageName)
			if err != nil {
				n = ImageName{Shape: tt.Shape, Scene: tt.Scene, DifficultyText: tt.Difficulty,
					Difficulty: ParseDifficulty("-" + tt.Difficulty + "-")}
			}
			names[i], truth[i] = n, tt
		default:
			return nil, nil, fmt.Errorf("%s: no test set for split %s and no doc.image_name in the log; give --testset %s=FILE", r.Where, split, split)
		}
	}
	return names, truth, nil
}

// mediaMismatch returns the first input_media entry that names an image file other than
// the document's; data URLs say nothing about the name and are passed over.
func mediaMismatch(media []string, imageName string) (string, bool) {
	var named []string
	for _, m := range media {
		if strings.HasPrefix(m, "data:") {
			continue
		}
		named = append(named, m)
	}
	if len(named) == 0 {
		return "", false
	}
	want := filepath.Base(imageName)
	if slices.ContainsFunc(named, func(m string) bool { return filepath.Base(m) == want }) {
		return "", false
	}
	return named[0], true
}

func scoreLog(lg *Log, split string, ts *TestSet, kinds []Kind, rule Rule) ([]Item, []string, error) {
	var warns []string
	names, truth, err := join(lg, split, ts)
	if err != nil {
		return nil, nil, err
	}
	var vocab []string
	if ts != nil {
		vocab = Vocabulary(ts.Docs)
		if len(lg.Records) < len(ts.Docs) {
			warns = append(warns, fmt.Sprintf("%s: covers %d of the %d documents of %s", lg.Path, len(lg.Records), len(ts.Docs), ts.Path))
		}
	} else {
		vocab = Vocabulary(names)
	}
	// A log of the combined task answers both questions in "Shape: ...\nScene: ..." lines;
	// each kind reads its own line, also when --kind picks one of them.
	combined := len(lg.Kinds()) > 1
	var items []Item
	for _, k := range kinds {
		// looser: m3eval counts a hit the log's metric missed; stricter: the reverse.
		looser, stricter, compared := 0, 0, 0
		for i, r := range lg.Records {
			var it Item
			if rule == RuleLMMSEval {
				gt := truth[i].Shape
				if k == KindScene {
					gt = truth[i].Scene
				}
				resp := r.Response
				if combined {
					resp = TaskField(resp, k)
				}
				it = Score(split, k, r.DocID, names[i], resp, vocab)
				it.Response = r.Response
				it.Hit = TaskRecallMatch(resp, gt)
			} else {
				resp := r.Response
				if combined {
					resp = Field(resp, k)
				}
				it = Score(split, k, r.DocID, names[i], resp, vocab)
			}
			items = append(items, it)
			if v, ok := r.Metrics[string(k)+"_recall"]; ok && (v == 0 || v == 1) {
				compared++
				switch {
				case it.Hit && v == 0:
					looser++
				case !it.Hit && v == 1:
					stricter++
				}
			}
		}
		if looser+stricter > 0 {
			warns = append(warns, disagreement(lg.Path, k, rule, looser, stricter, compared))
		}
	}
	return items, warns, nil
}

// disagreement words the warning for samples where the rule and the log's own metric
// differ, saying which side counts more.
func disagreement(path string, k Kind, rule Rule, looser, stricter, compared int) string {
	if rule == "" {
		rule = RuleM3eval
	}
	var parts []string
	if looser > 0 {
		why := ""
		if rule == RuleM3eval {
			why = " (it strips punctuation and accepts both Stationary and Stationery)"
		}
		parts = append(parts, fmt.Sprintf("on %d the %s rule counts a hit the log's metric does not%s", looser, rule, why))
	}
	if stricter > 0 {
		parts = append(parts, fmt.Sprintf("on %d the log's metric counts a hit the %s rule does not", stricter, rule))
	}
	side := "mixed: neither rule is uniformly stricter"
	switch {
	case stricter == 0:
		side = "the log's metric is stricter"
	case looser == 0:
		side = fmt.Sprintf("the %s rule is stricter", rule)
	}
	return fmt.Sprintf("%s: %s recall differs from the log's %s_recall on %d of %d samples; %s: %s", path, k, k, looser+stricter, compared, side, strings.Join(parts, "; "))
}
