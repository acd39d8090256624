package ingest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/m3bench/m3eval/internal/outfile"
)

// Media writes the images that logs embed (data URLs, base64 cells) to files in Dir. Each is
// named by its content's hash, so a turn's images are paths like any other. The same image is
// written once however often it appears; a file already there is left as it is. Files are
// written before the import commits: a failed import may leave images no turn refers to,
// which a later import of the corrected file reuses.
type Media struct {
	Dir     string
	made    bool
	written int
}

// ErrNoMediaDir is returned when a log embeds an image and no directory was given.
var ErrNoMediaDir = errors.New("the log embeds an image, and no directory to write it to was given")

// Written is the number of image files written so far.
func (m *Media) Written() int {
	if m == nil {
		return 0
	}
	return m.written
}

// Ref turns an image reference of a log into a turn's image path. A data URL is decoded and
// written out; anything else (a path or an http URL) is kept as it is.
func (m *Media) Ref(ref string) (string, error) {
	if !strings.HasPrefix(ref, "data:") {
		return ref, nil
	}
	head, data, ok := strings.Cut(ref[len("data:"):], ",")
	if !ok {
		return "", fmt.Errorf("a data URL without a comma")
	}
	mime, isBase64 := strings.CutSuffix(head, ";base64")
	if !isBase64 {
		return "", fmt.Errorf("a data URL that is not base64 (%.40s)", head)
	}
	if i := strings.IndexByte(mime, ';'); i >= 0 {
		mime = mime[:i]
	}
	b, err := decodeBase64(data)
	if err != nil {
		return "", fmt.Errorf("a data URL with bad base64: %w", err)
	}
	return m.Save(b, mime)
}

// Base64 writes out an image given as bare base64 (VLMEvalKit's image cells).
func (m *Media) Base64(s string) (string, error) {
	b, err := decodeBase64(s)
	if err != nil {
		return "", fmt.Errorf("not base64: %w", err)
	}
	return m.Save(b, "")
}

func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	if b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "=")); err == nil {
		return b, nil
	}
	return base64.URLEncoding.DecodeString(s)
}

// extensions of the image types logs embed; others are sniffed.
var extensions = map[string]string{
	"image/png": ".png", "image/jpeg": ".jpg", "image/jpg": ".jpg", "image/gif": ".gif",
	"image/webp": ".webp", "image/bmp": ".bmp", "image/tiff": ".tiff",
}

// Save writes b as <hash><ext> in Dir and returns its path.
func (m *Media) Save(b []byte, mime string) (string, error) {
	if m == nil || m.Dir == "" {
		return "", ErrNoMediaDir
	}
	ext, ok := extensions[strings.ToLower(mime)]
	if !ok {
		ext = extensions[http.DetectContentType(b)]
		if ext == "" {
			ext = ".bin"
		}
	}
	sum := sha256.Sum256(b)
	path := filepath.Join(m.Dir, hex.EncodeToString(sum[:16])+ext)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if !m.made {
		if err := os.MkdirAll(m.Dir, 0o755); err != nil {
			return "", err
		}
		m.made = true
	}
	// Written whole or not at all, and durably: a reader never finds a part of an image.
	if err := outfile.WriteFile(path, b, 0o644); err != nil {
		return "", err
	}
	m.written++
	return path, nil
}
