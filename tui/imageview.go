package tui

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"path"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/mattn/go-sixel"
	"github.com/muesli/termenv"
	"golang.org/x/image/draw"

	"github.com/m3bench/m3eval/internal/textsafe"
)

// Graphics protocols the full-screen image view can speak.
const (
	GraphicsAuto  = "auto"
	GraphicsKitty = "kitty"
	GraphicsITerm = "iterm2"
	GraphicsSixel = "sixel"
	GraphicsNone  = "none" // half-blocks, as in the preview
)

// DetectGraphics picks the graphics protocol: the flag or M3EVAL_GRAPHICS when set, else
// what the terminal announces about itself. Inside tmux or screen (or over SSH, where the
// variables do not travel) images are not passed through, so auto means none there.
func DetectGraphics(flag string, getenv func(string) string) (string, error) {
	v := strings.ToLower(strings.TrimSpace(flag))
	if v == "" {
		v = strings.ToLower(strings.TrimSpace(getenv("M3EVAL_GRAPHICS")))
	}
	switch v {
	case GraphicsKitty, GraphicsITerm, GraphicsSixel, GraphicsNone:
		return v, nil
	case "", GraphicsAuto:
	default:
		return "", fmt.Errorf("graphics %q: want kitty, iterm2, sixel, none or auto", v)
	}
	if getenv("TMUX") != "" || strings.HasPrefix(getenv("TERM"), "screen") {
		return GraphicsNone, nil
	}
	switch {
	case getenv("KITTY_WINDOW_ID") != "" || getenv("TERM") == "xterm-kitty" || getenv("TERM_PROGRAM") == "ghostty":
		return GraphicsKitty, nil
	case getenv("TERM_PROGRAM") == "iTerm.app" || getenv("TERM_PROGRAM") == "WezTerm" || getenv("LC_TERMINAL") == "iTerm2":
		return GraphicsITerm, nil
	case strings.HasPrefix(getenv("TERM"), "foot") || strings.HasPrefix(getenv("TERM"), "mlterm"):
		// Sixel terminals do not announce themselves otherwise; xterm -ti vt340 and the
		// others need --graphics sixel.
		return GraphicsSixel, nil
	}
	return GraphicsNone, nil
}

// fullImageMax bounds the image the full-screen view keeps: enough for a 4K screen's
// cells, and little memory.
const fullImageMax = 1600

// fullImageMsg carries one image decoded for the full-screen view.
type fullImageMsg struct {
	name string
	img  *image.RGBA
	err  error
}

// imageViewKeyMap is the keys of the full-screen image view.
type imageViewKeyMap struct {
	Next, Prev, Zoom, Close key.Binding
	// Panning a zoomed image: a line, a page, the ends.
	Down, Up, PageDown, PageUp, Top, Bottom key.Binding
}

// imageView is the full-screen view of a turn's images (i): full resolution through the
// terminal's graphics protocol when it has one, half-blocks otherwise; next/previous image,
// fit or zoom (fill the width).
type imageView struct {
	src      ImageSource
	st       Styles
	profile  termenv.Profile
	protocol string
	keys     imageViewKeyMap

	names []string
	idx   int
	zoom  bool
	panY  int // the first cell row of the zoomed image on screen
	full  map[string]fullImageMsg

	width, height int
	view          string
	dirty         bool
}

func newImageView(src ImageSource, st Styles, p termenv.Profile, protocol string) *imageView {
	return &imageView{src: src, st: st, profile: p, protocol: protocol, full: map[string]fullImageMsg{},
		keys: imageViewKeyMap{
			Next:     key.NewBinding(key.WithKeys("n", "right", "l"), key.WithHelp("n/→", "next image")),
			Prev:     key.NewBinding(key.WithKeys("p", "left", "h"), key.WithHelp("p/←", "previous image")),
			Zoom:     key.NewBinding(key.WithKeys("z"), key.WithHelp("z", "fit/zoom")),
			Close:    key.NewBinding(key.WithKeys("esc", "i"), key.WithHelp("esc", "back")),
			Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j ↑/k", "pan")),
			Up:       key.NewBinding(key.WithKeys("up", "k")),
			PageDown: key.NewBinding(key.WithKeys("pgdown", " ", "ctrl+d"), key.WithHelp("pgdn/pgup", "pan a page")),
			PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u")),
			Top:      key.NewBinding(key.WithKeys("home", "g")),
			Bottom:   key.NewBinding(key.WithKeys("end", "G")),
		}}
}

// Open shows the images of a turn, the first one first; it returns the decoding command.
func (v *imageView) Open(names []string) tea.Cmd {
	if len(v.full) > 8 { // one turn's images at a time, roughly
		v.full = map[string]fullImageMsg{}
	}
	v.names, v.idx, v.zoom, v.panY, v.dirty = names, 0, false, 0, true
	return v.load()
}

func (v *imageView) load() tea.Cmd {
	if len(v.names) == 0 {
		return nil
	}
	name := v.names[v.idx]
	if _, ok := v.full[name]; ok {
		return nil
	}
	src := v.src
	return func() tea.Msg { return decodeFull(src, name) }
}

// decodeFull decodes an image for the full-screen view, downscaled to fullImageMax.
func decodeFull(src ImageSource, name string) fullImageMsg {
	if strings.Contains(name, "://") {
		return fullImageMsg{name: name, err: errors.New("a URL: not fetched; o opens it in the browser")}
	}
	f, err := src.Open(name)
	if err != nil {
		return fullImageMsg{name: name, err: err}
	}
	defer f.Close()
	img, _, err := image.Decode(io.Reader(f))
	if err != nil {
		return fullImageMsg{name: name, err: fmt.Errorf("unreadable: %v", err)}
	}
	return fullImageMsg{name: name, img: downscale(img, fullImageMax, draw.CatmullRom)}
}

// Init implements tea.Model.
func (v *imageView) Init() tea.Cmd { return nil }

// Update implements tea.Model.
func (v *imageView) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case fullImageMsg:
		v.full[msg.name] = msg
		v.dirty = true
	case tea.KeyMsg:
		n := len(v.names)
		switch {
		case n == 0:
		case key.Matches(msg, v.keys.Next):
			v.idx, v.panY, v.dirty = (v.idx+1)%n, 0, true
			return v, v.load()
		case key.Matches(msg, v.keys.Prev):
			v.idx, v.panY, v.dirty = (v.idx+n-1)%n, 0, true
			return v, v.load()
		case key.Matches(msg, v.keys.Zoom):
			v.zoom, v.panY, v.dirty = !v.zoom, 0, true
		case !v.zoom:
			// Fit shows the whole image: nothing to pan.
		case key.Matches(msg, v.keys.Down):
			v.pan(1)
		case key.Matches(msg, v.keys.Up):
			v.pan(-1)
		case key.Matches(msg, v.keys.PageDown):
			v.pan(max(1, v.height-2))
		case key.Matches(msg, v.keys.PageUp):
			v.pan(-max(1, v.height-2))
		case key.Matches(msg, v.keys.Top):
			v.pan(-1 << 30)
		case key.Matches(msg, v.keys.Bottom):
			v.pan(1 << 30)
		}
	}
	return v, nil
}

// pan moves the zoomed image by d cell rows; render keeps it within the image.
func (v *imageView) pan(d int) {
	v.panY = max(0, min(v.panY+d, 1<<30))
	v.dirty = true
}

// zoomRows is how many cell rows the current image takes zoomed to the view's width.
func (v *imageView) zoomRows(img *image.RGBA) int {
	b := img.Bounds()
	return max(1, b.Dy()*v.width/max(1, b.Dx())/2)
}

// zoomedPart is the part of img on screen when zoomed to the width and panned: its rows
// from panY, bodyH rows tall (clamped, so the last page ends at the image's end).
func (v *imageView) zoomedPart(img *image.RGBA, bodyH int) (*image.RGBA, int, int) {
	total := v.zoomRows(img)
	v.panY = max(0, min(v.panY, total-bodyH))
	rows := min(bodyH, total)
	b := img.Bounds()
	y0 := b.Min.Y + v.panY*b.Dy()/total
	y1 := b.Min.Y + (v.panY+rows)*b.Dy()/total
	src := image.Rect(b.Min.X, y0, b.Max.X, max(y0+1, y1))
	// A copy at the origin: the renderers read images from (0,0).
	part := image.NewRGBA(image.Rect(0, 0, src.Dx(), src.Dy()))
	draw.Copy(part, image.Point{}, img, src, draw.Src, nil)
	return part, rows, total
}

// SetSize implements Component.
func (v *imageView) SetSize(w, h int) {
	if w != v.width || h != v.height {
		v.width, v.height, v.dirty = w, h, true
	}
}

// ShortHelp implements help.KeyMap.
func (v *imageView) ShortHelp() []key.Binding {
	if v.zoom {
		return []key.Binding{v.keys.Down, v.keys.PageDown, v.keys.Zoom, v.keys.Next, v.keys.Prev, v.keys.Close}
	}
	return []key.Binding{v.keys.Next, v.keys.Prev, v.keys.Zoom, v.keys.Close}
}

// FullHelp implements help.KeyMap.
func (v *imageView) FullHelp() [][]key.Binding { return [][]key.Binding{v.ShortHelp()} }

// View implements tea.Model: a title line, then the image; cached until something changes.
func (v *imageView) View() string {
	if v.dirty {
		v.view = v.render()
		v.dirty = false
	}
	return v.view
}

func (v *imageView) render() string {
	if len(v.names) == 0 || v.width == 0 {
		return ""
	}
	name := v.names[v.idx]
	mode := "fit"
	if v.zoom {
		mode = "zoom"
	}
	bodyH := max(1, v.height-1)
	d, ok := v.full[name]
	if v.zoom && ok && d.err == nil {
		// Zoomed to the width: the part panned to, and where it stands in the image.
		part, rows, total := v.zoomedPart(d.img, bodyH)
		if total > rows {
			mode = fmt.Sprintf("zoom · rows %d–%d of %d (↓/j pgdn end)", v.panY+1, v.panY+rows, total)
		}
		d.img = part
	}
	title := fmt.Sprintf("─ image %d/%d · %s · %s · %s ", v.idx+1, len(v.names), textsafe.Line(path.Base(name)), mode, v.protocol)
	title = ansi.Truncate(title, v.width, "…")
	head := v.st.PaneTitle.Render(title) + v.st.Dim.Render(strings.Repeat("─", max(0, v.width-lipgloss.Width(title))))
	var body []string
	switch {
	case !ok:
		body = []string{v.st.Dim.Render("loading…")}
	case d.err != nil:
		body = []string{v.st.Warning.Render("✗ " + textsafe.Line(d.err.Error()))}
	case v.protocol == GraphicsKitty || v.protocol == GraphicsITerm || v.protocol == GraphicsSixel:
		cols, rows := cellFit(d.img.Bounds(), v.width, bodyH, v.zoom)
		var seq string
		switch v.protocol {
		case GraphicsKitty:
			seq = kittyImage(d.img, cols, rows)
		case GraphicsITerm:
			seq = itermImage(d.img, cols, rows)
		default:
			seq = sixelImage(d.img, cols, rows)
		}
		// The image is drawn from the cursor at the first line and covers rows lines; the
		// lines under it stay empty for the renderer.
		body = append([]string{seq}, make([]string, rows-1)...)
	case v.profile == termenv.Ascii:
		b := d.img.Bounds()
		body = []string{v.st.Dim.Render(fmt.Sprintf("%d×%d: no colour in this terminal; o opens it in a viewer", b.Dx(), b.Dy()))}
	default:
		img := d.img
		if v.zoom { // the panned part, filling the width
			body = halfBlocks(img, v.width, 10*bodyH, v.profile)
			if len(body) > bodyH {
				body = body[:bodyH]
			}
		} else {
			body = halfBlocks(img, v.width, bodyH, v.profile)
		}
	}
	return head + "\n" + strings.Join(body, "\n")
}

// cellFit is the size in cells of an image shown in w×h cells, aspect kept (a cell is
// about twice as tall as wide); with zoom it fills the width.
func cellFit(b image.Rectangle, w, h int, zoom bool) (cols, rows int) {
	iw, ih := max(1, b.Dx()), max(1, b.Dy())
	cols, rows = w, max(1, ih*w/iw/2)
	if rows > h && !zoom {
		rows = h
		cols = max(1, iw*2*h/ih)
	}
	if rows > h {
		rows = h
	}
	return cols, rows
}

// kittyImage is the kitty graphics protocol's transmission of img as raw RGBA, shown in
// cols×rows cells, in chunks of 4096 base64 bytes as the protocol asks.
func kittyImage(img *image.RGBA, cols, rows int) string {
	b := img.Bounds()
	data := base64.StdEncoding.EncodeToString(img.Pix)
	var sb strings.Builder
	for i := 0; i < len(data); i += 4096 {
		chunk := data[i:min(len(data), i+4096)]
		more := 0
		if i+4096 < len(data) {
			more = 1
		}
		if i == 0 {
			fmt.Fprintf(&sb, "\x1b_Ga=T,f=32,s=%d,v=%d,c=%d,r=%d,q=2,m=%d;%s\x1b\\", b.Dx(), b.Dy(), cols, rows, more, chunk)
		} else {
			fmt.Fprintf(&sb, "\x1b_Gm=%d;%s\x1b\\", more, chunk)
		}
	}
	return sb.String()
}

// Sixel draws pixels, not cells: the view assumes the common cell of 10×20 pixels (the
// terminal could be asked, CSI 16 t, but not through Bubble Tea's input reader).
const sixelCellW, sixelCellH = 10, 20

// sixelImage is img as sixels (DCS q … ST), scaled to about cols×rows cells. The encoder
// is mattn/go-sixel (palette quantization and run-length coding).
func sixelImage(img *image.RGBA, cols, rows int) string {
	var buf bytes.Buffer
	enc := sixel.NewEncoder(&buf)
	enc.Width, enc.Height = cols*sixelCellW, rows*sixelCellH
	if err := enc.Encode(downscale(img, max(enc.Width, enc.Height), draw.ApproxBiLinear)); err != nil {
		return ""
	}
	return buf.String()
}

// itermImage is iTerm2's inline image (OSC 1337 File=) of img as PNG in cols×rows cells.
func itermImage(img *image.RGBA, cols, rows int) string {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return ""
	}
	return fmt.Sprintf("\x1b]1337;File=inline=1;size=%d;width=%d;height=%d;preserveAspectRatio=1:%s\a",
		buf.Len(), cols, rows, base64.StdEncoding.EncodeToString(buf.Bytes()))
}
