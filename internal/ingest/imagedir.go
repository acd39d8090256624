package ingest

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ImageDir is the folder of the pictures a log refers to but does not carry (import --images
// DIR). lmms-eval and VLMEvalKit logs usually come without their images, and the annotator
// must not be asked about a picture it cannot see. A turn without images gets the file named by
// the map (--image-map FILE: id,file lines) for the log's question id, or else the file
// DIR/<id>.<png|jpg|jpeg|webp|gif> that exists. Relative image paths of the log are
// resolved against DIR too (see LabelOptions.ImageBase).
type ImageDir struct {
	Dir  string
	ByID map[string]string // question id → file name in Dir (nil: by name)
}

// imageExts are the extensions tried for DIR/<id>.
var imageExts = []string{".png", ".jpg", ".jpeg", ".webp", ".gif"}

// ForID returns the image of a question id. That is its mapped file (even when missing, so
// the import summary lists it), or the first DIR/<id>.<ext> that exists.
func (d *ImageDir) ForID(id string) (string, bool) {
	if d == nil || id == "" {
		return "", false
	}
	if d.ByID != nil {
		f, ok := d.ByID[id]
		if !ok {
			return "", false
		}
		return filepath.Join(d.Dir, f), true
	}
	for _, ext := range imageExts {
		p := filepath.Join(d.Dir, id+ext)
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", false
}

// ReadImageMap reads the file of --image-map, CSV lines id,file. A header line "id,file" is
// skipped, and each file is relative to --images DIR.
func ReadImageMap(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = 2
	out := map[string]string{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := cr.FieldPos(0)
		id, file := strings.TrimSpace(rec[0]), strings.TrimSpace(rec[1])
		if line == 1 && id == "id" && file == "file" {
			continue
		}
		if id == "" || file == "" {
			return nil, fmt.Errorf("%s:%d: want id,file", path, line)
		}
		if prev, dup := out[id]; dup && prev != file {
			return nil, fmt.Errorf("%s:%d: id %s is mapped twice (%s and %s)", path, line, id, prev, file)
		}
		out[id] = file
	}
}
