package tui

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/gif"  // decode GIF previews (first frame)
	_ "image/jpeg" // decode JPEG previews
	_ "image/png"  // decode PNG previews
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp" // decode WebP previews

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// ImageSource opens the image files a turn names.
type ImageSource interface {
	Open(name string) (fs.File, error)
}

// defaultImageSource reads the file system; the demo's paths (annotations/demo/...), which
// exist only inside the repository, fall back to the images embedded in the binary, so the
// demo shows its pictures from any working directory.
type defaultImageSource struct{}

// Open implements ImageSource.
func (defaultImageSource) Open(name string) (fs.File, error) {
	f, err := os.Open(name)
	if err != nil && errors.Is(err, fs.ErrNotExist) {
		if rest, ok := strings.CutPrefix(path.Clean(name), "annotations/"); ok && strings.HasPrefix(rest, "demo/") {
			if ef, eerr := annotations.Demo.Open(rest); eerr == nil {
				return ef, nil
			}
		}
	}
	return f, err
}

// Preview sizes. The thumbnail is what decoding keeps: large enough for a full-width
// preview on a 200-column terminal, small enough that 32 of them stay under 13 MB.
const (
	thumbMax     = 400
	maxPixels    = 200_000_000 // refuse to decode larger images (a bomb, not a photo)
	imageCache   = 32
	previewCount = 4 // previews side by side at most
)

// decodedImage is one image as the preview needs it, decoded off the UI goroutine.
type decodedImage struct {
	name          string
	url           bool
	width, height int
	size          int64
	thumb         *image.RGBA
	err           error
}

// imagesDecodedMsg carries the decoded images of one item.
type imagesDecodedMsg struct {
	turnID int64
	images []*decodedImage
}

// imagePane previews the images of the turn on screen. It owns its caches: decoded
// thumbnails by path (shared across items, as episodes reuse their images) and the
// rendered preview, made again only when the item or the size changes.
type imagePane struct {
	src     ImageSource
	st      Styles
	profile termenv.Profile

	turnID  int64
	names   []string
	decoded []*decodedImage // nil while decoding

	cache map[string]*decodedImage
	order []string // cache entries, oldest first

	width, height int
	view          string
	dirty         bool
}

func newImagePane(src ImageSource, st Styles, p termenv.Profile) *imagePane {
	return &imagePane{src: src, st: st, profile: p, cache: map[string]*decodedImage{}}
}

// Show starts previewing an item's images: cached ones at once, the others decoded by the
// returned command.
func (p *imagePane) Show(turnID int64, names []string) tea.Cmd {
	p.turnID, p.names, p.decoded, p.dirty = turnID, names, nil, true
	if len(names) == 0 {
		return nil
	}
	var have []*decodedImage
	for _, n := range names {
		if d, ok := p.cache[n]; ok {
			have = append(have, d)
		}
	}
	if len(have) == len(names) {
		p.decoded = have
		return nil
	}
	src := p.src
	names = append([]string(nil), names...)
	return func() tea.Msg {
		out := make([]*decodedImage, len(names))
		for i, n := range names {
			out[i] = decodeImage(src, n)
		}
		return imagesDecodedMsg{turnID: turnID, images: out}
	}
}

// Init implements tea.Model.
func (p *imagePane) Init() tea.Cmd { return nil }

// Update implements tea.Model.
func (p *imagePane) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if msg, ok := msg.(imagesDecodedMsg); ok {
		for _, d := range msg.images {
			p.remember(d)
		}
		if msg.turnID == p.turnID {
			p.decoded, p.dirty = msg.images, true
		}
	}
	return p, nil
}

func (p *imagePane) remember(d *decodedImage) {
	if _, ok := p.cache[d.name]; !ok {
		p.order = append(p.order, d.name)
	}
	p.cache[d.name] = d
	for len(p.order) > imageCache {
		delete(p.cache, p.order[0])
		p.order = p.order[1:]
	}
}

// PreferredWidth is how many columns the previews need at height h (aspect kept), 0 when
// they draw no pixels (no colour): then the captions need no column of their own.
func (p *imagePane) PreferredWidth(h int) int {
	if p.profile == termenv.Ascii || h < 3 || len(p.names) == 0 {
		return 0
	}
	n := min(len(p.names), previewCount)
	w := 0
	for i := 0; i < n; i++ {
		aw, ah := 4, 3 // until decoded
		if p.decoded != nil && p.decoded[i].thumb != nil {
			b := p.decoded[i].thumb.Bounds()
			aw, ah = b.Dx(), b.Dy()
		}
		w += max(16, aw*2*(h-1)/ah) + 1
	}
	return w
}

// SetSize implements Component.
func (p *imagePane) SetSize(w, h int) {
	if w != p.width || h != p.height {
		p.width, p.height, p.dirty = w, h, true
	}
}

// ShortHelp implements help.KeyMap; the screen owns the image keys.
func (p *imagePane) ShortHelp() []key.Binding { return nil }

// FullHelp implements help.KeyMap.
func (p *imagePane) FullHelp() [][]key.Binding { return nil }

// View implements tea.Model: the cached preview.
func (p *imagePane) View() string {
	if p.dirty {
		p.view = p.render()
		p.dirty = false
	}
	return p.view
}

// render lays the previews side by side, each with its caption below it.
func (p *imagePane) render() string {
	if p.width < 8 || p.height < 2 || len(p.names) == 0 {
		return ""
	}
	n := min(len(p.names), previewCount)
	cw := (p.width - (n - 1)) / n
	cols := make([][]string, n)
	for i := 0; i < n; i++ {
		var d *decodedImage
		if p.decoded != nil {
			d = p.decoded[i]
		}
		cols[i] = p.renderOne(i, d, cw, p.height)
	}
	lines := make([]string, p.height)
	for y := range lines {
		parts := make([]string, n)
		for i := range cols {
			l := ""
			if y < len(cols[i]) {
				l = cols[i][y]
			}
			parts[i] = padRight(l, cw)
		}
		lines[y] = strings.Join(parts, " ")
	}
	if more := len(p.names) - n; more > 0 {
		lines[len(lines)-1] = ansi.Truncate(p.st.Dim.Render(fmt.Sprintf("+%d more image(s): o opens them", more)), p.width, "…")
	}
	// Trailing empty lines take no room in the stacked layout's rows either way.
	for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[len(lines)-1])) == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

func (p *imagePane) renderOne(i int, d *decodedImage, w, h int) []string {
	label := fmt.Sprintf("image %d/%d ", i+1, len(p.names))
	caption := func(s string, st func(...string) string) []string {
		return []string{ansi.Truncate(st(label+s), w, "…")}
	}
	switch {
	case d == nil:
		return caption("loading…", p.st.Dim.Render)
	case d.url:
		// A link the terminal can open (OSC 8); nothing is fetched.
		u := textsafe.Line(d.name)
		return []string{ansi.Truncate(p.st.Dim.Render(label)+ansi.SetHyperlink(u)+u+ansi.ResetHyperlink(), w, "…"),
			ansi.Truncate(p.st.Dim.Render("a URL: not fetched, o opens it"), w, "…")}
	case d.err != nil:
		return []string{ansi.Truncate(p.st.Warning.Render(label+"✗ "+textsafe.Line(d.err.Error())), w, "…"),
			ansi.Truncate(p.st.Dim.Render(textsafe.Line(d.name)), w, "…")}
	}
	info := fmt.Sprintf("%s %d×%d · %s", path.Base(textsafe.Line(d.name)), d.width, d.height, humanSize(d.size))
	if p.profile == termenv.Ascii || h < 3 {
		return caption(info, p.st.Dim.Render)
	}
	out := halfBlocks(d.thumb, w, h-1, p.profile)
	return append(out, ansi.Truncate(p.st.Dim.Render(label+info), w, "…"))
}

// halfBlocks draws img in at most w×h cells, aspect kept: each cell is "▀" with the upper
// pixel as foreground and the lower as background, so a cell holds two square-ish pixels.
// Written by hand: the libraries that do this (e.g. for chafa) need cgo or draw the whole
// terminal themselves.
func halfBlocks(img *image.RGBA, w, h int, prof termenv.Profile) []string {
	b := img.Bounds()
	if b.Dx() == 0 || b.Dy() == 0 || w <= 0 || h <= 0 {
		return nil
	}
	pw, ph := w, b.Dy()*w/b.Dx()
	if ph > 2*h {
		ph = 2 * h
		pw = max(1, b.Dx()*ph/b.Dy())
	}
	ph = max(2, ph)
	dst := image.NewRGBA(image.Rect(0, 0, pw, ph))
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	lines := make([]string, 0, (ph+1)/2)
	var sb strings.Builder
	for y := 0; y < ph; y += 2 {
		sb.Reset()
		for x := 0; x < pw; x++ {
			top := dst.RGBAAt(x, y)
			if y+1 < ph {
				bot := dst.RGBAAt(x, y+1)
				sb.WriteString(colorSeq(prof, top, false))
				sb.WriteString(colorSeq(prof, bot, true))
				sb.WriteString("▀")
			} else {
				sb.WriteString(colorSeq(prof, top, false))
				sb.WriteString("\x1b[49m▀")
			}
		}
		sb.WriteString("\x1b[0m")
		lines = append(lines, sb.String())
	}
	return lines
}

// colorSeq is the SGR sequence of a colour in the terminal's profile: 24-bit when it has
// true colour, the nearest of 256 otherwise (termenv picks it).
func colorSeq(prof termenv.Profile, c color.RGBA, bg bool) string {
	if prof == termenv.TrueColor {
		if bg {
			return fmt.Sprintf("\x1b[48;2;%d;%d;%dm", c.R, c.G, c.B)
		}
		return fmt.Sprintf("\x1b[38;2;%d;%d;%dm", c.R, c.G, c.B)
	}
	tc := prof.FromColor(c)
	if tc == nil {
		return ""
	}
	return termenv.CSI + tc.Sequence(bg) + "m"
}

// decodeImage reads, decodes and downscales one image; it runs in a command.
func decodeImage(src ImageSource, name string) *decodedImage {
	d := &decodedImage{name: name}
	if strings.HasPrefix(name, "http://") || strings.HasPrefix(name, "https://") {
		d.url = true
		return d
	}
	f, err := src.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			d.err = errors.New("missing: no such file")
		} else {
			d.err = fmt.Errorf("unreadable: %w", err)
		}
		return d
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil {
		d.size = st.Size()
		if st.IsDir() {
			d.err = errors.New("unreadable: a directory, not an image")
			return d
		}
	}
	rs, ok := f.(io.ReadSeeker)
	if !ok {
		d.err = errors.New("unreadable: cannot seek")
		return d
	}
	cfg, format, err := image.DecodeConfig(rs)
	if err != nil {
		d.err = fmt.Errorf("unreadable: not a PNG, JPEG, GIF or WebP image (%v)", err)
		return d
	}
	d.width, d.height = cfg.Width, cfg.Height
	if int64(cfg.Width)*int64(cfg.Height) > maxPixels {
		d.err = fmt.Errorf("%d×%d is too large to preview", cfg.Width, cfg.Height)
		return d
	}
	if _, err := rs.Seek(0, io.SeekStart); err != nil {
		d.err = fmt.Errorf("unreadable: %w", err)
		return d
	}
	img, _, err := image.Decode(rs)
	if err != nil {
		d.err = fmt.Errorf("unreadable %s: %v", format, err)
		return d
	}
	d.thumb = thumbnail(img)
	return d
}

// thumbnail downscales img to fit thumbMax×thumbMax (never up), aspect kept.
func thumbnail(img image.Image) *image.RGBA { return downscale(img, thumbMax, draw.ApproxBiLinear) }

// downscale fits img into limit×limit pixels (never scaling up), aspect kept.
func downscale(img image.Image, limit int, s draw.Scaler) *image.RGBA {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w > limit || h > limit {
		if w >= h {
			w, h = limit, max(1, h*limit/w)
		} else {
			w, h = max(1, w*limit/h), limit
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	s.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	return dst
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", (n+512)>>10)
	}
	return fmt.Sprintf("%d B", n)
}
