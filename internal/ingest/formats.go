package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/m3bench/m3eval/internal/dataset"
)

// Format is a layout of conversation logs that m3eval imports.
type Format string

// The formats of Open.
const (
	FormatM3eval     Format = "m3eval"     // m3eval's own turn, episode and labeled records
	FormatOpenAI     Format = "openai"     // chat-completions logs: messages with roles
	FormatShareGPT   Format = "sharegpt"   // conversations with from/value (LLaVA, ShareGPT4V)
	FormatVLMEvalKit Format = "vlmevalkit" // VLMEvalKit prediction files (xlsx, tsv, json)
	FormatLMMSEval   Format = "lmms-eval"  // lmms-eval --log_samples files
	FormatMap        Format = "map"        // any JSON records, fields picked by --map
)

// Formats lists the formats --from accepts.
var Formats = []Format{FormatM3eval, FormatOpenAI, FormatShareGPT, FormatVLMEvalKit, FormatLMMSEval}

// DefaultActionType is the action_type of turns from logs that have none. The rubric
// treats it like a turn that does not try to mislead.
const DefaultActionType = "unknown"

// Options choose how Open reads a file.
type Options struct {
	Format Format
	// Map gives, for FormatMap, the JSON path of each turn field.
	Map []FieldPath
	// Media receives images the file embeds (data URLs, base64 cells).
	Media *Media
	// Limits bound a record's and a cell's size (zero: the defaults).
	Limits Limits
	// Images, when set, finds the images of logs that come without them (--images DIR).
	Images *ImageDir
}

// Open returns the Source of one file in opts.Format. The caller closes the returned
// Closer when done (it is the file, or the spreadsheet reader).
func Open(path string, opts Options) (Source, io.Closer, error) {
	if opts.Format == FormatVLMEvalKit {
		switch strings.ToLower(filepath.Ext(path)) {
		case ".xlsx":
			return openXLSX(path, opts)
		case ".tsv", ".csv":
			return openDelimited(path, opts)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	var r io.Reader = f
	if opts.Format == FormatMap && IsDelimited(path) {
		r = DelimitedAsJSON(path, f)
	}
	src, err := NewSource(path, r, opts)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return src, f, nil
}

// NewSource reads the JSON records (array or JSON Lines) of r in opts.Format.
func NewSource(name string, r io.Reader, opts Options) (Source, error) {
	c := &conv{name: name, media: opts.Media, stem: stem(name), seen: map[string]int{}, images: opts.Images}
	switch opts.Format {
	case "", FormatM3eval:
		rd := NewReader(name, r)
		rd.SetLimits(opts.Limits)
		return rd, nil
	case FormatOpenAI:
		c.format, c.fn = opts.Format, c.openai
	case FormatShareGPT:
		c.format, c.fn = opts.Format, c.sharegpt
	case FormatLMMSEval:
		c.format, c.fn = opts.Format, c.lmmsEval
		if m := filepath.Base(filepath.Dir(name)); m != "." && m != string(filepath.Separator) {
			c.model = m // lmms-eval writes into a folder named after the model
		}
		c.task = lmmsTask(name)
	case FormatVLMEvalKit:
		c.format, c.fn = opts.Format, c.vlmevalkitJSON
		c.model, c.dataset = vlmevalkitNames(name)
	case FormatMap:
		if len(opts.Map) == 0 {
			return nil, fmt.Errorf("--map: give at least one FIELD=PATH")
		}
		if err := CheckTurnMap(opts.Map); err != nil {
			return nil, err
		}
		c.format, c.fn, c.paths = opts.Format, c.mapped, opts.Map
	default:
		return nil, fmt.Errorf("unknown format %q", opts.Format)
	}
	if len(opts.Map) > 0 && opts.Format != FormatMap {
		// --map with --from: the format makes the turns, the maps add to them.
		c.paths = opts.Map
		inner := c.fn
		c.fn = func(line int, raw []byte) ([]Record, error) {
			recs, err := inner(line, raw)
			if err != nil || len(recs) == 0 {
				return recs, err
			}
			return c.overlay(line, raw, recs)
		}
	}
	rd := NewConvertingReader(name, r, nil)
	rd.SetLimits(opts.Limits)
	c.rd = rd
	rd.convert = c.fn
	if len(c.paths) > 0 {
		c.found = map[string]bool{}
		rd.atEnd = c.checkLabelPaths
	}
	return rd, nil
}

// conv carries what the converters of one file share.
type conv struct {
	name, stem  string
	format      Format
	media       *Media
	rd          *Reader
	fn          func(line int, raw []byte) ([]Record, error)
	model, task string // lmms-eval: the model folder and the task
	dataset     string // vlmevalkit
	paths       []FieldPath
	seen        map[string]int  // --map without a turn path: turns so far per episode
	row         bool            // lines are spreadsheet rows
	images      *ImageDir       // --images: the pictures of a log that has none
	found       map[string]bool // --map label and annotator paths some record held
	firstKeys   []string        // the first record's keys, for the error of a path in none
}

func stem(name string) string {
	b := filepath.Base(name)
	for {
		e := filepath.Ext(b)
		if e == "" || e == b {
			return b
		}
		b = strings.TrimSuffix(b, e)
	}
}

func (c *conv) errorf(line int, field, format string, args ...any) error {
	e := &Error{File: c.name, Line: line, Field: field, Row: c.row,
		Err: fmt.Errorf("%w: "+format, append([]any{ErrBadRecord}, args...)...)}
	return e
}

// decode unmarshals a value with encoding/json's semantics, quickly (see unmarshalRecord);
// a syntax error is returned as is, so the reader can tell a value cut by a line break.
func (c *conv) decode(line int, raw []byte, v any) error {
	if off, esc := loneSurrogate(raw); off >= 0 {
		return c.errorf(line+bytes.Count(raw[:off], []byte("\n")), "", "%s", surrogateMsg(esc))
	}
	if jsonv2.Unmarshal(raw, v, jsonv1.DefaultOptionsV1()) == nil {
		return nil
	}
	err := json.Unmarshal(raw, v)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return se
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return c.errorf(line, "", "a record must be a JSON object, not %s", te.Value)
		}
		return c.errorf(line, te.Field, "expected %s, got %s", kindName(te.Type.Kind().String()), te.Value)
	}
	return c.errorf(line, "", "%v", err)
}

// fastUnmarshal is json.Unmarshal through the faster JSON v2 decoder (see unmarshalRecord);
// on an error encoding/json decodes again, for its error types and wording.
func fastUnmarshal(raw []byte, v any) error {
	if jsonv2.Unmarshal(raw, v, jsonv1.DefaultOptionsV1()) == nil {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// turn builds the record of one converted turn. source holds the source's other fields;
// it goes into meta under "source", a key the meta contract leaves free.
func (c *conv) turn(line int, episode string, n int, user, resp, expected string, images []string, model string, source map[string]any) (Record, error) {
	source["format"] = string(c.format)
	meta, err := jsonv2.Marshal(map[string]any{"source": source}, jsonv1.DefaultOptionsV1(), jsonv2.Deterministic(true))
	if err != nil {
		return Record{}, c.errorf(line, "", "cannot keep the source fields: %v", err)
	}
	if len(images) == 0 && c.images != nil {
		// The log's question id is the last part of the episode id (lmms-eval doc_id,
		// VLMEvalKit index, a conversation's id).
		id := episode[strings.LastIndex(episode, "/")+1:]
		if p, ok := c.images.ForID(id); ok {
			images = []string{p}
		}
	}
	t := dataset.Turn{
		SampleID: episode + "_turn_" + strconv.Itoa(n), EpisodeID: episode, Turn: n,
		ActionType: DefaultActionType, UserMessage: user, VLMResponse: resp, ExpectedAnswer: expected,
		Images: images, Model: model, Meta: meta,
	}
	// Every field is the converter's: nothing is "omitted" to keep a stored value.
	return Record{Line: line, Row: c.row, Turn: t}, nil
}

// episodeID is the id a conversation gives itself, else one from the file and line.
func (c *conv) episodeID(line int, ids ...json.RawMessage) string {
	for _, raw := range ids {
		if len(raw) == 0 {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
		var n json.Number
		if json.Unmarshal(raw, &n) == nil {
			return n.String()
		}
	}
	unit := "L"
	if c.row {
		unit = "R"
	}
	return fmt.Sprintf("%s-%s%d", c.stem, unit, line)
}

// image turns an image reference into a turn image path, writing data URLs out.
func (c *conv) image(line int, field, ref string) (string, error) {
	p, err := c.media.Ref(ref)
	if err != nil {
		return "", c.errorf(line, field, "%v", err)
	}
	return p, nil
}

// turnSource is a turn's meta.source: the conversation's own fields, the turn's extras
// and the system prompt.
func turnSource(conversation, extra map[string]any, system []string) map[string]any {
	src := make(map[string]any, len(conversation)+len(extra)+1)
	for k, v := range conversation {
		src[k] = v
	}
	for k, v := range extra {
		src[k] = v
	}
	if len(system) > 0 {
		src["system"] = strings.Join(system, "\n\n")
	}
	return src
}

// rest returns the fields of obj other than the given ones, for meta.source.
func rest(obj map[string]json.RawMessage, skip ...string) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		if !slices.Contains(skip, k) {
			out[k] = v
		}
	}
	return out
}

// ErrNoRecords is returned by Detect and DetectReader for a file without a record: empty,
// blank lines, or []. There is no format to tell, and nothing to import.
var ErrNoRecords = errors.New("no records in the file")

// IsSheet reports whether name is a spreadsheet (xlsx, tsv), as VLMEvalKit's prediction
// files are.
func IsSheet(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".xlsx", ".tsv":
		return true
	}
	return false
}

// Detect tells the format of a file from its extension or its first record, and says why.
func Detect(path string) (Format, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	format, why, _, err := DetectReader(path, f)
	return format, why, err
}

// DetectReader tells the format of r, named name, from the name's extension or the first
// record, and says why. It returns a reader that yields r from its start: the first
// record, read to detect, is replayed from memory.
func DetectReader(name string, r io.Reader) (Format, string, io.Reader, error) {
	return DetectReaderLimits(name, r, Limits{})
}

// DetectReaderLimits is DetectReader with a first record of at most lim.MaxRecord bytes.
func DetectReaderLimits(name string, r io.Reader, lim Limits) (Format, string, io.Reader, error) {
	if IsSheet(name) {
		return FormatVLMEvalKit, "a " + strings.ToLower(filepath.Ext(name))[1:] + " file", r, nil
	}
	var seen bytes.Buffer
	max := lim.withDefaults().MaxRecord
	// The decoder holds the whole first record, and seen a copy: no more than the limit.
	first, err := firstValue(io.LimitReader(io.TeeReader(r, &seen), max+64<<10))
	replay := io.MultiReader(&seen, r)
	if err != nil && int64(seen.Len()) > max {
		return "", "", replay, fmt.Errorf("%s: %w: the first record is longer than %s (limit: --max-record-size %s)", name, ErrLimit, FormatSize(max), FormatSize(max))
	}
	if errors.Is(err, ErrNoRecords) {
		return "", "", replay, err
	}
	if err != nil {
		return "", "", replay, fmt.Errorf("%s: cannot tell the format: %w", name, err)
	}
	format, why, err := DetectRecord(name, first)
	return format, why, replay, err
}

// DetectRecord tells the format from the keys of a file's first record.
func DetectRecord(path string, first map[string]json.RawMessage) (Format, string, error) {
	has := func(k string) bool { _, ok := first[k]; return ok }
	switch {
	case has("turns") || has("sample_id") || has("episode_id") && has("user_message"):
		return FormatM3eval, "m3eval records (sample_id/turns)", nil
	case has("messages"):
		return FormatOpenAI, "chat messages (messages)", nil
	case has("body") || has("request"):
		var inner map[string]json.RawMessage
		raw := first["body"]
		if raw == nil {
			raw = first["request"]
		}
		if json.Unmarshal(raw, &inner) == nil && inner["messages"] != nil {
			return FormatOpenAI, "chat requests (body.messages)", nil
		}
	case has("conversations"):
		return FormatShareGPT, "ShareGPT conversations (conversations)", nil
	case has("doc_id") && (has("filtered_resps") || has("resps")) || has("logs"):
		return FormatLMMSEval, "lmms-eval samples (doc_id, resps)", nil
	case has("index") && has("prediction"):
		return FormatVLMEvalKit, "VLMEvalKit predictions (index, prediction)", nil
	}
	return "", "", fmt.Errorf("%s: cannot tell the format from the first record's keys (%s); give --from %s or --map FIELD=PATH",
		path, strings.Join(slices.Sorted(maps.Keys(first)), ", "), formatList())
}

func formatList() string {
	var s []string
	for _, f := range Formats {
		s = append(s, string(f))
	}
	return strings.Join(s, "|")
}

// firstValue decodes the first object of a JSON array or of JSON Lines.
func firstValue(r io.Reader) (map[string]json.RawMessage, error) {
	br := bufio.NewReader(r)
	first, err := firstByte(br)
	if err == io.EOF {
		return nil, ErrNoRecords
	}
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(br)
	if first == '[' {
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		if !dec.More() {
			return nil, ErrNoRecords
		}
	}
	var m map[string]json.RawMessage
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("the first record is not a JSON object: %w", err)
	}
	return m, nil
}
