package illusion

import (
	"context"
	"fmt"
)

// TestSet is a built test set as lmms-eval sees it: the documents in order, their doc_id
// being the position.
type TestSet struct {
	Split string
	Path  string
	Docs  []ImageName
	// Dropped counts rows whose image_name does not parse; the lab's process_docs drops
	// such rows, so doc_ids count only the others.
	Dropped int
}

// LoadTestSet reads a test-set file (Parquet or JSONL) and parses its image names.
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
		n, err := ParseImageName(s)
		if err != nil {
			ts.Dropped++
			continue
		}
		ts.Docs = append(ts.Docs, n)
	}
	return ts, nil
}

// LogInput is a sample log to score; Split may be empty to infer it from the task name.
type LogInput struct {
	Split string
	Path  string
}

// ScoreResult holds the scored items and what the user should know about them.
type ScoreResult struct {
	Items    []Item
	Warnings []string
}

// ScoreLogs scores sample logs against test sets. Each log's split is the one given, else
// the test set whose short name appears in the task name, else the only test set; its
// kinds (shape, scene or both) are kind when not empty, else inferred by Log.Kinds. A log
// that keeps each doc may be scored without a test set; when both are there they must agree,
// which catches a log scored against the wrong test set.
func ScoreLogs(ctx context.Context, sets []*TestSet, logs []LogInput, kind Kind) (*ScoreResult, error) {
	bySplit := map[string]*TestSet{}
	var splitNames []string
	for _, ts := range sets {
		bySplit[ts.Split] = ts
		splitNames = append(splitNames, ts.Split)
	}
	res := &ScoreResult{}
	for _, ts := range sets {
		if ts.Dropped > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %d rows have an image_name that does not parse; doc_ids skip them as the lmms-eval task does", ts.Path, ts.Dropped))
		}
	}
	for _, in := range logs {
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
		ts := bySplit[split]
		kinds := []Kind{kind}
		if kind == "" {
			kinds = lg.Kinds()
		}
		if len(kinds) == 0 {
			return nil, fmt.Errorf("%s: cannot tell shape from scene (no shape_recall or scene_recall key, no 'shape' or 'scene' in task %q); use --kind", in.Path, lg.Task)
		}
		items, warns, err := scoreLog(lg, split, ts, kinds)
		if err != nil {
			return nil, err
		}
		res.Items = append(res.Items, items...)
		res.Warnings = append(res.Warnings, warns...)
	}
	return res, nil
}

func scoreLog(lg *Log, split string, ts *TestSet, kinds []Kind) ([]Item, []string, error) {
	var warns []string
	seen := map[int]string{}
	names := make([]ImageName, len(lg.Records))
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
			names[i] = ts.Docs[r.DocID]
			if r.ImageName != "" && r.ImageName != names[i].String() {
				return nil, nil, fmt.Errorf("%s: field doc.image_name: %q, but doc %d of %s is %q (scored against the wrong test set?)", r.Where, r.ImageName, r.DocID, ts.Path, names[i].String())
			}
		case r.ImageName != "":
			n, err := ParseImageName(r.ImageName)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: field doc.image_name: %w", r.Where, err)
			}
			names[i] = n
		default:
			return nil, nil, fmt.Errorf("%s: no test set for split %s and no doc.image_name in the log; give --testset %s=FILE", r.Where, split, split)
		}
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
		disagree, compared := 0, 0
		for i, r := range lg.Records {
			resp := r.Response
			if combined {
				resp = Field(resp, k)
			}
			it := Score(split, k, r.DocID, names[i], resp, vocab)
			items = append(items, it)
			if v, ok := r.Metrics[string(k)+"_recall"]; ok && (v == 0 || v == 1) {
				compared++
				if (v == 1) != it.Hit {
					disagree++
				}
			}
		}
		if disagree > 0 {
			warns = append(warns, fmt.Sprintf("%s: %s recall differs from the log's %s_recall on %d of %d samples (m3eval normalizes punctuation and accepts both Stationary and Stationery)", lg.Path, k, k, disagree, compared))
		}
	}
	return items, warns, nil
}
