package simulate

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/m3bench/m3eval/internal/jsonpath"
)

// SchemaJSON is the JSON Schema (draft 2020-12) of one line of a scenes file.
//
//go:embed schema/scene.schema.json
var SchemaJSON []byte

// Language is the language of a scene's turns.
type Language string

// The languages templates exist for.
const (
	English Language = "en"
	Chinese Language = "zh"
)

// Scene is one line of a scenes file: what the tests of one episode are about.
type Scene struct {
	ID              string     `json:"id"`
	Language        Language   `json:"language"`
	Images          []string   `json:"images"`
	ObjectsPerImage [][]Object `json:"objects_per_image"`
	Task            *Task      `json:"task,omitempty"`
	// NextTasks are further tasks, run after Task in the same conversation (the document's
	// next-task action: "在一个episode结束后，开始新任务").
	NextTasks []Task      `json:"next_tasks,omitempty"`
	Updates   []UpdateDef `json:"updates,omitempty"`

	// Line is the scene's line in its file.
	Line int `json:"-"`
}

// Tasks lists the scene's tasks in the order an episode runs them: Task, then NextTasks.
func (sc *Scene) Tasks() []*Task {
	if sc.Task == nil {
		return nil
	}
	out := []*Task{sc.Task}
	for i := range sc.NextTasks {
		out = append(out, &sc.NextTasks[i])
	}
	return out
}

// Object is an object of one image.
type Object struct {
	ID         string            `json:"id"`
	Type       string            `json:"type"`
	Name       string            `json:"name,omitempty"`
	Aliases    []string          `json:"aliases,omitempty"`
	Attributes map[string]string `json:"attributes"`
}

// Task is the question the reasoning test asks and the evidence a complete answer needs.
type Task struct {
	Type             string     `json:"type,omitempty"`
	Question         string     `json:"question"`
	Answer           string     `json:"answer"`
	RequiredEvidence []Evidence `json:"required_evidence"`
}

// Evidence is one fact a complete answer rests on.
type Evidence struct {
	ID        string   `json:"id"`
	Entity    string   `json:"entity"`
	Attribute string   `json:"attribute,omitempty"`
	Value     string   `json:"value,omitempty"`
	Text      string   `json:"text"`
	Keywords  []string `json:"keywords,omitempty"`
	Region    string   `json:"region,omitempty"`
	DependsOn []string `json:"depends_on,omitempty"`
}

// UpdateDef is a state change the update action announces.
type UpdateDef struct {
	Entity    string `json:"entity"`
	Attribute string `json:"attribute"`
	NewValue  string `json:"new_value"`
}

// Error is a bad scene: file, line and field.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

// Error implements error.
func (e *Error) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
}

const schemaURL = "scene.schema.json"

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) { return jsonpath.CompileSchema(schemaURL, SchemaJSON) })

// ReadScenesFile reads a scenes file.
func ReadScenesFile(path string) ([]Scene, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("scenes: %w", err)
	}
	defer f.Close()
	return ReadScenes(path, f)
}

// ReadScenes reads JSON Lines of scenes, checking each against the schema and the rules the
// schema cannot say (ids that refer to objects and evidence, one object list per image).
// name is the file name errors give.
func ReadScenes(name string, r io.Reader) ([]Scene, error) {
	sch, err := compiled()
	if err != nil {
		return nil, fmt.Errorf("scene schema: %w", err)
	}
	br := bufio.NewReaderSize(r, 1<<16)
	var scenes []Scene
	seen := map[string]int{}
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if t := bytes.TrimSpace(b); len(t) > 0 && t[0] != '#' {
			sc, perr := parseScene(sch, name, line, t)
			if perr != nil {
				return nil, perr
			}
			if first, dup := seen[sc.ID]; dup {
				return nil, &Error{name, line, "id", fmt.Sprintf("%q is also the id of line %d", sc.ID, first)}
			}
			seen[sc.ID] = line
			scenes = append(scenes, *sc)
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if len(scenes) == 0 {
		return nil, fmt.Errorf("%s: no scenes", name)
	}
	return scenes, nil
}

func parseScene(sch *jsonschema.Schema, name string, line int, b []byte) (*Scene, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, &Error{name, line, "", "invalid JSON: " + err.Error()}
	}
	if err := sch.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			field, msg := schemaProblem(ve)
			return nil, &Error{name, line, field, msg}
		}
		return nil, &Error{name, line, "", err.Error()}
	}
	var sc Scene
	if err := json.Unmarshal(b, &sc); err != nil {
		return nil, &Error{name, line, "", err.Error()}
	}
	sc.Line = line
	if err := sc.check(); err != nil {
		err.File, err.Line = name, line
		return nil, err
	}
	return &sc, nil
}

// check holds the rules the schema cannot say.
func (sc *Scene) check() *Error {
	if len(sc.ObjectsPerImage) != len(sc.Images) {
		return &Error{Field: "objects_per_image", Msg: fmt.Sprintf("%d lists for %d images: give one list per image", len(sc.ObjectsPerImage), len(sc.Images))}
	}
	objs := map[string]*Object{}
	for i, list := range sc.ObjectsPerImage {
		for j := range list {
			o := &list[j]
			if _, dup := objs[o.ID]; dup {
				return &Error{Field: fmt.Sprintf("objects_per_image[%d][%d].id", i, j), Msg: fmt.Sprintf("%q is used twice", o.ID)}
			}
			objs[o.ID] = o
		}
	}
	if sc.Task == nil && len(sc.NextTasks) > 0 {
		return &Error{Field: "next_tasks", Msg: "next tasks follow a first task: give task too"}
	}
	for ti, task := range sc.Tasks() {
		prefix := "task"
		if ti > 0 {
			prefix = fmt.Sprintf("next_tasks[%d]", ti-1)
		}
		if err := checkTask(task, prefix, objs); err != nil {
			return err
		}
	}
	for i, u := range sc.Updates {
		o, ok := objs[u.Entity]
		if !ok {
			return &Error{Field: fmt.Sprintf("updates[%d].entity", i), Msg: fmt.Sprintf("%q is not an object id of the scene", u.Entity)}
		}
		if _, ok := o.Attributes[u.Attribute]; !ok {
			return &Error{Field: fmt.Sprintf("updates[%d].attribute", i), Msg: fmt.Sprintf("object %q has no attribute %q", u.Entity, u.Attribute)}
		}
	}
	return nil
}

// checkTask holds the rules of one task: evidence ids unique within it, entities that are
// objects, values that can be stated, dependencies on the task's other evidence.
func checkTask(task *Task, prefix string, objs map[string]*Object) *Error {
	ids := map[string]bool{}
	for i, ev := range task.RequiredEvidence {
		f := fmt.Sprintf("%s.required_evidence[%d]", prefix, i)
		if ids[ev.ID] {
			return &Error{Field: f + ".id", Msg: fmt.Sprintf("%q is used twice", ev.ID)}
		}
		ids[ev.ID] = true
		o, ok := objs[ev.Entity]
		if !ok {
			return &Error{Field: f + ".entity", Msg: fmt.Sprintf("%q is not an object id of the scene", ev.Entity)}
		}
		if ev.Attribute != "" && ev.Value == "" {
			if _, ok := o.Attributes[ev.Attribute]; !ok {
				return &Error{Field: f + ".attribute", Msg: fmt.Sprintf("object %q has no attribute %q and the evidence gives no value", ev.Entity, ev.Attribute)}
			}
		}
		if ev.Value != "" && ev.Attribute == "" {
			return &Error{Field: f + ".attribute", Msg: "missing: a value needs the attribute it is a value of"}
		}
		if ev.Attribute == "" && len(ev.Keywords) == 0 {
			return &Error{Field: f + ".keywords", Msg: "missing: give an attribute (and value) or keywords, so answers can activate the fact"}
		}
	}
	for i, ev := range task.RequiredEvidence {
		for k, d := range ev.DependsOn {
			if !ids[d] || d == ev.ID {
				return &Error{Field: fmt.Sprintf("%s.required_evidence[%d].depends_on[%d]", prefix, i, k), Msg: fmt.Sprintf("%q is not the id of another required evidence", d)}
			}
		}
	}
	return nil
}

// schemaProblem names the field of a validation error; an unknown property is named too.
func schemaProblem(ve *jsonschema.ValidationError) (field, msg string) {
	leaf := jsonpath.Leaf(ve)
	if ap, ok := leaf.ErrorKind.(*kind.AdditionalProperties); ok && len(ap.Properties) > 0 {
		return jsonpath.Join(jsonpath.Tokens(leaf.InstanceLocation), ap.Properties[0]), "unknown field (see the scene schema)"
	}
	return jsonpath.SchemaProblem(ve)
}

// maxImageBytes bounds an image file: a scene's images are sent whole, as data URLs.
const maxImageBytes = 32 << 20

// ResolveImages resolves the scenes' local image paths inside root (the scenes file's
// directory, or --images DIR) and checks each: it must stay inside root (no absolute path
// elsewhere, no "..", no symbolic link leading out), be a regular file, and be an image by
// its content (PNG, JPEG, GIF, WebP or BMP), so that a scenes file cannot post an arbitrary
// file (/etc/shadow, a key) to the endpoint as a data URL. http(s) URLs stay as they are,
// and data URLs must be images. file names the scenes file in errors.
func ResolveImages(scenes []Scene, file, root string) error {
	realRoot, err := filepath.Abs(root)
	if err == nil {
		realRoot, err = filepath.EvalSymlinks(realRoot)
	}
	if err != nil {
		return fmt.Errorf("images directory %s: %w", root, err)
	}
	for i := range scenes {
		sc := &scenes[i]
		for j, im := range sc.Images {
			field := fmt.Sprintf("images[%d]", j)
			if strings.HasPrefix(im, "http://") || strings.HasPrefix(im, "https://") {
				continue
			}
			if strings.HasPrefix(im, "data:") {
				if !strings.HasPrefix(im, "data:image/") {
					return &Error{file, sc.Line, field, "a data URL that is not an image (want data:image/...)"}
				}
				continue
			}
			p, msg := resolveImage(im, root, realRoot)
			if msg != "" {
				return &Error{file, sc.Line, field, fmt.Sprintf("%s: %s", im, msg)}
			}
			sc.Images[j] = p
		}
	}
	return nil
}

// resolveImage checks one local image path; msg says why it is refused.
func resolveImage(im, root, realRoot string) (path, msg string) {
	p := im
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	where := fmt.Sprintf("image paths must stay inside %s (the scenes file's directory, or --images DIR)", root)
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", "no such file (" + where + ")"
		}
		return "", "cannot be read: " + plainErr(err)
	}
	if real, err = filepath.Abs(real); err != nil {
		return "", plainErr(err)
	}
	if rel, err := filepath.Rel(realRoot, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", "outside the images directory: " + where
	}
	f, err := os.Open(real)
	if err != nil {
		return "", "cannot be read: " + plainErr(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", "cannot be read: " + plainErr(err)
	}
	if !st.Mode().IsRegular() {
		return "", "not a regular file"
	}
	if st.Size() > maxImageBytes {
		return "", fmt.Sprintf("%d bytes: larger than the %d MB an image may have", st.Size(), maxImageBytes>>20)
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	if ct := http.DetectContentType(head[:n]); !strings.HasPrefix(ct, "image/") || ct == "image/svg+xml" {
		return "", "not an image (want PNG, JPEG, GIF, WebP or BMP; the content reads as " + ct + ")"
	}
	return p, ""
}

// plainErr is an *os.PathError's cause without the path (the message names the path once).
func plainErr(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
