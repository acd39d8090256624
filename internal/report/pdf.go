package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// ErrNoChromium means no headless Chromium was found for --pdf.
var ErrNoChromium = errors.New("no Chromium found: install it (Debian: apt-get install chromium) or set M3EVAL_CHROMIUM to its path")

// FindChromium returns the Chromium to print with: $M3EVAL_CHROMIUM, else the first of
// chromium, chromium-browser, google-chrome on $PATH.
func FindChromium() (string, error) {
	if p := os.Getenv("M3EVAL_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}

// HeadlessFlags are the flags Chromium runs with here: headless, no sandbox (containers),
// nothing fetched in the background, a fresh profile in profileDir.
func HeadlessFlags(profileDir string) []string {
	return []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + profileDir}
}

// PrintPDF prints the HTML file to an A4 PDF with Chromium, with the page's own print
// style (every table open, charts kept whole).
func PrintPDF(ctx context.Context, chromium, htmlPath, pdfPath string) error {
	abs, err := filepath.Abs(htmlPath)
	if err != nil {
		return err
	}
	profile, err := os.MkdirTemp("", "m3eval-chromium-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	args := append(HeadlessFlags(profile), "--no-pdf-header-footer", "--print-to-pdf="+pdfPath, "file://"+abs)
	cmd := exec.CommandContext(ctx, chromium, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("print PDF with %s: %w: %s", chromium, err, lastLine(stderr.String()))
	}
	if st, err := os.Stat(pdfPath); err != nil || st.Size() == 0 {
		return fmt.Errorf("print PDF with %s: no PDF written: %s", chromium, lastLine(stderr.String()))
	}
	return nil
}

func lastLine(s string) string {
	s = string(bytes.TrimSpace([]byte(s)))
	if i := bytes.LastIndexByte([]byte(s), '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
