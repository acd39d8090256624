package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/m3bench/m3eval/internal/lmmslog"
)

// lmmsTask is the task of an lmms-eval sample file name: {date}_samples_{task}.jsonl.
func lmmsTask(path string) string {
	base := stem(path)
	if i := strings.Index(base, "samples_"); i >= 0 {
		base = base[i+len("samples_"):]
	}
	return base
}

// lmmsKnown are the sample fields that become turn fields.
var lmmsKnown = []string{"doc_id", "input", "arguments", "resps", "filtered_resps", "target", "input_media"}

// lmmsEval converts lmms-eval samples, each a one-turn episode: doc_id, the prompt
// (input, or the first argument in versions before it), the response (filtered_resps, else
// resps), target as the expected answer and input_media as images. The oldest layout, one
// object with a "logs" list, gives all its samples at once. The episode is
// <model folder>/<task>/<doc_id>, so runs of two models do not collide.
func (c *conv) lmmsEval(line int, raw []byte) ([]Record, error) {
	var top map[string]json.RawMessage
	if err := c.decode(line, raw, &top); err != nil {
		return nil, err
	}
	if logs, ok := top["logs"]; ok && top["doc_id"] == nil {
		var list []json.RawMessage
		if err := json.Unmarshal(logs, &list); err != nil {
			return nil, c.errorf(line, "logs", "not a list of samples")
		}
		var out []Record
		for i, s := range list {
			recs, err := c.lmmsSample(line, fmt.Sprintf("logs[%d].", i), s)
			if err != nil {
				return nil, err
			}
			out = append(out, recs...)
		}
		return out, nil
	}
	return c.lmmsSample(line, "", raw)
}

func (c *conv) lmmsSample(line int, prefix string, raw []byte) ([]Record, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, c.errorf(line, strings.TrimSuffix(prefix, "."), "not a JSON object")
	}
	docID, err := lmmslog.DocID(m)
	if err != nil {
		return nil, c.lmmsError(line, prefix, err)
	}
	response, err := lmmslog.Response(m)
	if err != nil {
		return nil, c.lmmsError(line, prefix, err)
	}
	prompt := ""
	if v, ok := m["input"]; ok {
		var in any
		json.Unmarshal(v, &in)
		prompt, _ = lmmslog.FirstString(in)
	} else if v, ok := m["arguments"]; ok {
		// [[context, gen_kwargs, ...]] or {"gen_args_0": {"arg_0": context, ...}}.
		var args any
		json.Unmarshal(v, &args)
		if obj, ok := args.(map[string]any); ok {
			if g, ok := obj["gen_args_0"].(map[string]any); ok {
				prompt, _ = g["arg_0"].(string)
			}
		} else {
			prompt, _ = lmmslog.FirstString(args)
		}
	}
	// lmms-eval keeps the model's "<image>" tokens in the prompt, as LLaVA's data does:
	// taken out of the text the annotator reads, counted in meta (as for sharegpt).
	placeholders := strings.Count(prompt, imagePlaceholder)
	if placeholders > 0 {
		prompt = strings.TrimSpace(strings.ReplaceAll(prompt, imagePlaceholder, ""))
	}
	target := ""
	if v, ok := m["target"]; ok && string(v) != "null" {
		if json.Unmarshal(v, &target) != nil {
			target = string(v) // a list or number, kept as its JSON text
		}
	}
	var images, names []string
	if v, ok := m["input_media"]; ok && string(v) != "null" {
		var media []string
		if err := json.Unmarshal(v, &media); err != nil {
			return nil, c.errorf(line, prefix+"input_media", "not a list of strings")
		}
		// lmms-eval lists an image dict's path and then its bytes as a data URL: the
		// path names the dataset's image, not a file here. When the bytes are there,
		// they are the images; the names go to meta.source.input_media_names.
		embedded := slices.ContainsFunc(media, func(s string) bool { return strings.HasPrefix(s, "data:") })
		for i, ref := range media {
			if embedded && !strings.HasPrefix(ref, "data:") {
				names = append(names, ref)
				continue
			}
			p, err := c.image(line, fmt.Sprintf("%sinput_media[%d]", prefix, i), ref)
			if err != nil {
				return nil, err
			}
			images = append(images, p)
		}
	}
	src := rest(m, lmmsKnown...)
	if names != nil {
		src["input_media_names"] = names
	}
	src["task"] = c.task
	src["doc_id"] = docID
	if placeholders > 0 {
		src["image_placeholders"] = placeholders
	}

	episode := fmt.Sprintf("%s/%d", c.task, docID)
	if c.model != "" && c.model != "." && c.model != string(filepath.Separator) {
		episode = c.model + "/" + episode
	}
	rec, err := c.turn(line, episode, 1, prompt, response, target, images, c.model, src)
	if err != nil {
		return nil, err
	}
	return []Record{rec}, nil
}

// lmmsError places an lmmslog.FieldError in the file.
func (c *conv) lmmsError(line int, prefix string, err error) error {
	var fe *lmmslog.FieldError
	if errors.As(err, &fe) {
		return c.errorf(line, prefix+fe.Field, "%v", fe.Err)
	}
	return c.errorf(line, strings.TrimSuffix(prefix, "."), "%v", err)
}
