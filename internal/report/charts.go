package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Palette: Okabe and Ito's eight colours, which stay distinct under the common colour
// blindnesses; every series also gets its own marker shape and line dash, so the charts
// survive greyscale printing.
var okabeIto = []color.Color{
	rgb(0x00, 0x72, 0xB2), rgb(0xE6, 0x9F, 0x00), rgb(0x00, 0x9E, 0x73), rgb(0xCC, 0x79, 0xA7),
	rgb(0x56, 0xB4, 0xE9), rgb(0xD5, 0x5E, 0x00), rgb(0x00, 0x00, 0x00), rgb(0xF0, 0xE4, 0x42),
}

var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{},
	draw.RingGlyph{}, draw.BoxGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.PyramidGlyph{}}

var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(2)}, {vg.Points(2), vg.Points(2)},
	{vg.Points(6), vg.Points(2), vg.Points(2), vg.Points(2)}}

func rgb(r, g, b uint8) color.Color { return color.RGBA{r, g, b, 255} }

func seriesColor(i int) color.Color      { return okabeIto[i%len(okabeIto)] }
func seriesGlyph(i int) draw.GlyphDrawer { return glyphs[i%len(glyphs)] }
func lineDash(i int) []vg.Length         { return dashes[i%len(dashes)] }

// sansFont is Liberation Sans, which gonum/plot embeds for measuring text; the page's CSS
// names it with metric-compatible fallbacks (Arial, Helvetica).
func sansFont(size vg.Length) font.Font {
	return font.From(font.Font{Typeface: "Liberation", Variant: "Sans"}, size)
}

func textStyle(size vg.Length) draw.TextStyle {
	return text.Style{Color: color.Black, Font: sansFont(size), Handler: plot.DefaultTextHandler}
}

// sequential maps t in [0,1] to ColorBrewer's Blues, whose lightness falls steadily: the
// order survives greyscale and colour blindness.
func sequential(t float64) color.Color {
	stops := [][3]float64{{247, 251, 255}, {198, 219, 239}, {107, 174, 214}, {33, 113, 181}, {8, 48, 107}}
	if math.IsNaN(t) {
		return rgb(0xEE, 0xEE, 0xEE)
	}
	t = math.Max(0, math.Min(1, t)) * float64(len(stops)-1)
	i := int(math.Min(t, float64(len(stops)-2)))
	f := t - float64(i)
	var c [3]uint8
	for k := range c {
		c[k] = uint8(stops[i][k] + f*(stops[i+1][k]-stops[i][k]) + 0.5)
	}
	return rgb(c[0], c[1], c[2])
}

// inkOn returns black or white, whichever reads better on background c.
func inkOn(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	if 0.2126*float64(r)+0.7152*float64(g)+0.0722*float64(b) < 0.45*65535 {
		return color.White
	}
	return color.Black
}

// newPlot returns a plot with the report's fonts and labels.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	// The page's h3 carries the title; repeating it inside the drawing costs height. It
	// stays in the SVG's aria-label.
	_ = title
	p.Title.TextStyle.Font = sansFont(11)
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sansFont(10)
		a.Tick.Label.Font = sansFont(9)
	}
	p.Legend.TextStyle.Font = sansFont(9)
	p.Legend.Top = true
	return p
}

var (
	svgStart  = regexp.MustCompile(`(?s)^.*?<svg `)
	svgSize   = regexp.MustCompile(`^<svg width="[^"]*" height="[^"]*"`)
	fontStyle = regexp.MustCompile(`font-family:Liberation Sans;font-variant:normal;font-weight:normal;font-style:normal;`)
)

// svgOf draws p into an SVG of w × h points and returns it ready to inline: no XML
// prologue, sized by the page (its viewBox keeps the aspect), the font named once by the
// page's CSS. gonum's SVG canvas escapes all text it writes.
func svgOf(p *plot.Plot, w, h vg.Length, label string) template.HTML {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		// Writing to a bytes.Buffer does not fail; keep the page whole if it ever does.
		return template.HTML("")
	}
	s := svgStart.ReplaceAllString(b.String(), "<svg ")
	s = svgSize.ReplaceAllString(s, fmt.Sprintf(`<svg role="img" aria-label="%s" width="%s" height="%s"`,
		template.HTMLEscapeString(label), pts(w), pts(h)))
	s = fontStyle.ReplaceAllString(s, "")
	return template.HTML(s) // #nosec: produced by vgsvg, which escapes text; the label is escaped above
}

// pts gives a length in CSS pixels (96 per inch, 72 points per inch), so that the drawing's
// 9-point labels show at 9 points.
func pts(l vg.Length) string { return strconv.FormatFloat(l.Points()*4/3, 'f', 0, 64) }

// chartHeight gives a chart with n rows of labels enough height to keep them apart.
func chartHeight(n int) vg.Length {
	return vg.Points(math.Max(180, float64(70+16*n)))
}

const chartWidth = vg.Length(460)

// --- interval dots: forest and dot plots -------------------------------------------------

// interval is one estimate with its optional 95% interval.
type interval struct {
	Y           float64 // row position
	Est, Lo, Hi float64 // NaN when undefined
	HasCI       bool
}

// intervals is a plotter of estimates with horizontal interval whiskers (forest plot).
type intervals struct {
	pts   []interval
	glyph draw.GlyphStyle
	line  draw.LineStyle
}

func newIntervals(pts []interval, series int) *intervals {
	return &intervals{pts: pts,
		glyph: draw.GlyphStyle{Color: seriesColor(series), Radius: vg.Points(3.2), Shape: seriesGlyph(series)},
		line:  draw.LineStyle{Color: seriesColor(series), Width: vg.Points(1.2), Dashes: lineDash(series)}}
}

// Plot implements plot.Plotter.
func (iv *intervals) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, q := range iv.pts {
		y := trY(q.Y)
		if q.HasCI && !math.IsNaN(q.Lo) && !math.IsNaN(q.Hi) {
			c.StrokeLine2(iv.line, trX(q.Lo), y, trX(q.Hi), y)
			cap := vg.Points(3)
			c.StrokeLine2(iv.line, trX(q.Lo), y-cap, trX(q.Lo), y+cap)
			c.StrokeLine2(iv.line, trX(q.Hi), y-cap, trX(q.Hi), y+cap)
		}
		if !math.IsNaN(q.Est) {
			c.DrawGlyph(iv.glyph, vg.Point{X: trX(q.Est), Y: y})
		}
	}
}

// DataRange implements plot.DataRanger.
func (iv *intervals) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	ymin, ymax = math.Inf(1), math.Inf(-1)
	for _, q := range iv.pts {
		for _, x := range []float64{q.Est, q.Lo, q.Hi} {
			if !math.IsNaN(x) && (q.HasCI || x == q.Est) {
				xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
			}
		}
		ymin, ymax = math.Min(ymin, q.Y), math.Max(ymax, q.Y)
	}
	return xmin, xmax, ymin, ymax
}

// Thumbnail implements plot.Thumbnailer.
func (iv *intervals) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(iv.line, c.Min.X, y, c.Max.X, y)
	c.DrawGlyph(iv.glyph, c.Center())
}

// refLine is a vertical reference line at x (0 for coefficients).
type refLine struct{ x float64 }

// Plot implements plot.Plotter.
func (r refLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(r.x)
	c.StrokeLine2(draw.LineStyle{Color: color.Gray{Y: 120}, Width: vg.Points(0.6), Dashes: []vg.Length{vg.Points(3), vg.Points(3)}},
		x, c.Min.Y, x, c.Max.Y)
}

// forestPlot draws one row per label (top to bottom) and one series per name, each
// series' points nudged apart so that their whiskers do not overlap. x is clamped to at
// least [lo, hi].
func forestPlot(title, xLabel string, labels []string, names []string, series [][]interval, lo, hi float64) template.HTML {
	p := newPlot(title, xLabel, "")
	n := len(labels)
	rev := make([]string, n)
	for i, l := range labels {
		rev[n-1-i] = l
	}
	p.NominalY(rev...)
	p.Add(refLine{0})
	p.X.Min, p.X.Max = lo, hi
	p.X.Tick.Marker = plot.TickerFunc(niceTicks)
	for s, pts := range series {
		nudge := 0.0
		if len(series) > 1 {
			nudge = 0.3 * (float64(s)/float64(len(series)-1) - 0.5)
		}
		moved := make([]interval, len(pts))
		for i, q := range pts {
			q.Y = float64(n-1) - q.Y - nudge
			moved[i] = q
		}
		iv := newIntervals(moved, s)
		p.Add(iv)
		if len(names) > 1 {
			p.Legend.Add(names[s], iv)
		}
	}
	p.Y.Min, p.Y.Max = -0.7, float64(n)-0.3
	legend := 0.0
	if len(names) > 1 {
		// Headroom above the first row, so that the legend covers no marker.
		legend = 0.45 * float64(len(names))
		p.Y.Max += legend
	}
	p.Add(plotter.NewGrid())
	return svgOf(p, chartWidth, chartHeight(n)+vg.Points(16*legend), title)
}

// --- heatmaps ----------------------------------------------------------------------------

// cells is an annotated heatmap plotter: shade from shade(), text from label().
type cells struct {
	rows, cols int
	shade      func(r, c int) float64 // in [0,1], NaN for an empty cell
	label      func(r, c int) string
}

// Plot implements plot.Plotter.
func (h *cells) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	ts := textStyle(8)
	ts.XAlign, ts.YAlign = draw.XCenter, draw.YCenter
	for r := 0; r < h.rows; r++ {
		for col := 0; col < h.cols; col++ {
			y := float64(h.rows - 1 - r)
			x0, x1 := trX(float64(col)-0.5), trX(float64(col)+0.5)
			y0, y1 := trY(y-0.5), trY(y+0.5)
			bg := sequential(h.shade(r, col))
			c.FillPolygon(bg, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
			c.StrokeLines(draw.LineStyle{Color: color.White, Width: vg.Points(1)},
				[]vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}, {X: x0, Y: y0}})
			if s := h.label(r, col); s != "" {
				ts.Color = inkOn(bg)
				c.FillText(ts, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, s)
			}
		}
	}
}

// DataRange implements plot.DataRanger.
func (h *cells) DataRange() (xmin, xmax, ymin, ymax float64) {
	return -0.5, float64(h.cols) - 0.5, -0.5, float64(h.rows) - 0.5
}

// heatmap draws rows × cols cells, rows from the top.
func heatmap(title, xLabel, yLabel string, rowNames, colNames []string, shade func(r, c int) float64, label func(r, c int) string) template.HTML {
	p := newPlot(title, xLabel, yLabel)
	rev := make([]string, len(rowNames))
	for i, l := range rowNames {
		rev[len(rowNames)-1-i] = l
	}
	p.NominalY(rev...)
	p.NominalX(colNames...)
	p.X.Tick.Label.Rotation = 0
	if longest(colNames) > 6 && len(colNames) > 3 {
		p.X.Tick.Label.Rotation = math.Pi / 5
		p.X.Tick.Label.XAlign = draw.XRight
	}
	p.Add(&cells{rows: len(rowNames), cols: len(colNames), shade: shade, label: label})
	side := math.Max(200, float64(90+28*max(len(rowNames), len(colNames))))
	w := vg.Points(math.Min(side+120, float64(chartWidth)))
	return svgOf(p, w, vg.Points(math.Min(side+40, 420)), title)
}

func longest(ss []string) int {
	n := 0
	for _, s := range ss {
		n = max(n, len([]rune(s)))
	}
	return n
}

// --- stacked horizontal bars: label distributions ----------------------------------------

// stack is a stacked horizontal bar plotter: row r's shares, one segment per category.
type stack struct {
	shares [][]float64 // rows × categories, each row summing to 1 (or all 0)
	part   int         // the category this plotter draws (for the legend)
}

// Plot implements plot.Plotter.
func (s *stack) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	n := len(s.shares)
	for r, row := range s.shares {
		y := float64(n - 1 - r)
		acc := 0.0
		for k, x := range row {
			if k == s.part {
				x0, x1 := trX(acc*100), trX((acc+x)*100)
				y0, y1 := trY(y-0.35), trY(y+0.35)
				c.FillPolygon(categoryColor(k, len(row)), []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
			}
			acc += x
		}
	}
}

// DataRange implements plot.DataRanger.
func (s *stack) DataRange() (xmin, xmax, ymin, ymax float64) {
	return 0, 100, -0.5, float64(len(s.shares)) - 0.5
}

// Thumbnail implements plot.Thumbnailer.
func (s *stack) Thumbnail(c *draw.Canvas) {
	k := 1
	if len(s.shares) > 0 {
		k = len(s.shares[0])
	}
	c.FillPolygon(categoryColor(s.part, k), []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}

// categoryColor shades category k of n from light to dark, so that ordered categories read
// in order in greyscale too.
func categoryColor(k, n int) color.Color {
	if n <= 1 {
		return sequential(0.6)
	}
	return sequential(0.12 + 0.88*float64(k)/float64(n-1))
}

// stackedBars draws each row's category shares in percent.
func stackedBars(title, xLabel string, rowNames, categories []string, shares [][]float64) template.HTML {
	p := newPlot(title, xLabel, "")
	rev := make([]string, len(rowNames))
	for i, l := range rowNames {
		rev[len(rowNames)-1-i] = l
	}
	p.NominalY(rev...)
	p.X.Min, p.X.Max = 0, 100
	for k, cat := range categories {
		st := &stack{shares: shares, part: k}
		p.Add(st)
		p.Legend.Add(cat, st)
	}
	// The legend sits right of 100%, in space the axis keeps free for it.
	p.X.Max = 100 + 6*float64(longest(categories)+6)
	p.X.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 20, Label: "20"},
		{Value: 40, Label: "40"}, {Value: 60, Label: "60"}, {Value: 80, Label: "80"}, {Value: 100, Label: "100"}})
	p.Legend.Top = true
	p.Legend.Left = false
	p.Legend.ThumbnailWidth = vg.Points(14)
	return svgOf(p, chartWidth, chartHeight(max(len(rowNames), len(categories))), title)
}

// --- bubbles: item mean against judge score ----------------------------------------------

// bubble is one (x, y) point with how many items sit on it.
type bubble struct {
	X, Y float64
	N    int
}

type bubbles struct {
	pts  []bubble
	maxN int
}

// Plot implements plot.Plotter: circle area proportional to the count.
func (b *bubbles) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	fill := color.NRGBA{0x00, 0x72, 0xB2, 0x80}
	for _, q := range b.pts {
		r := vg.Points(1.5 + 9*math.Sqrt(float64(q.N)/float64(b.maxN)))
		c.DrawGlyph(draw.GlyphStyle{Color: fill, Radius: r, Shape: draw.CircleGlyph{}}, vg.Point{X: trX(q.X), Y: trY(q.Y)})
		c.DrawGlyph(draw.GlyphStyle{Color: color.RGBA{0x08, 0x30, 0x6B, 255}, Radius: r, Shape: draw.RingGlyph{}}, vg.Point{X: trX(q.X), Y: trY(q.Y)})
	}
}

// DataRange implements plot.DataRanger.
func (b *bubbles) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, q := range b.pts {
		xmin, xmax = math.Min(xmin, q.X), math.Max(xmax, q.X)
		ymin, ymax = math.Min(ymin, q.Y), math.Max(ymax, q.Y)
	}
	return
}

// bubblePlot draws binned (x, y) points with the identity line over [lo, hi].
func bubblePlot(title, xLabel, yLabel string, pts []bubble, lo, hi float64) template.HTML {
	p := newPlot(title, xLabel, yLabel)
	maxN := 1
	for _, q := range pts {
		maxN = max(maxN, q.N)
	}
	diag, _ := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
	diag.LineStyle = draw.LineStyle{Color: color.Gray{Y: 120}, Width: vg.Points(0.6), Dashes: []vg.Length{vg.Points(3), vg.Points(3)}}
	p.Add(plotter.NewGrid(), diag, &bubbles{pts: pts, maxN: maxN})
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = lo-0.3, hi+0.3, lo-0.3, hi+0.3
	p.X.Tick.Marker = plot.TickerFunc(niceTicks)
	p.Y.Tick.Marker = plot.TickerFunc(niceTicks)
	return svgOf(p, vg.Points(340), vg.Points(300), title)
}

// --- vertical bars with intervals --------------------------------------------------------

// bar is one bar with an optional interval.
type bar struct {
	Value, Lo, Hi float64
	HasCI         bool
}

type bars struct {
	vals   []bar
	series int
	of     int // number of series side by side
}

// Plot implements plot.Plotter.
func (b *bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	width := 0.8 / float64(b.of)
	fill := seriesColor(b.series)
	line := draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
	for i, v := range b.vals {
		x := float64(i) - 0.4 + width*float64(b.series)
		if !math.IsNaN(v.Value) {
			x0, x1 := trX(x), trX(x+width)
			y0, y1 := trY(0), trY(v.Value)
			c.FillPolygon(fill, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
			c.StrokeLines(line, []vg.Point{{X: x0, Y: y0}, {X: x0, Y: y1}, {X: x1, Y: y1}, {X: x1, Y: y0}})
		}
		if v.HasCI && !math.IsNaN(v.Lo) && !math.IsNaN(v.Hi) {
			xm := trX(x + width/2)
			c.StrokeLine2(line, xm, trY(v.Lo), xm, trY(v.Hi))
			c.StrokeLine2(line, xm-vg.Points(3), trY(v.Lo), xm+vg.Points(3), trY(v.Lo))
			c.StrokeLine2(line, xm-vg.Points(3), trY(v.Hi), xm+vg.Points(3), trY(v.Hi))
		}
	}
}

// DataRange implements plot.DataRanger.
func (b *bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	ymin, ymax = 0, 0
	for _, v := range b.vals {
		for _, y := range []float64{v.Value, v.Hi} {
			if !math.IsNaN(y) {
				ymax = math.Max(ymax, y)
			}
		}
	}
	return -0.5, float64(len(b.vals)) - 0.5, ymin, ymax
}

// Thumbnail implements plot.Thumbnailer.
func (b *bars) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(seriesColor(b.series), []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}

// barChart draws one group of bars per category, one bar per series.
func barChart(title, xLabel, yLabel string, categories, names []string, series [][]bar, yMax float64) template.HTML {
	p := newPlot(title, xLabel, yLabel)
	p.NominalX(categories...)
	if longest(categories) > 8 && len(categories) > 3 {
		p.X.Tick.Label.Rotation = math.Pi / 5
		p.X.Tick.Label.XAlign = draw.XRight
	}
	p.Add(plotter.NewGrid())
	for s, vals := range series {
		b := &bars{vals: vals, series: s, of: len(series)}
		p.Add(b)
		if len(names) > 1 {
			p.Legend.Add(names[s], b)
		}
	}
	p.Y.Min = 0
	if yMax > 0 {
		p.Y.Max = yMax
	}
	if len(names) > 1 {
		// Headroom above the tallest bar, so that the legend covers no bar or whisker.
		p.Y.Max *= 1 + 0.1*float64(len(names))
	}
	p.Y.Tick.Marker = plot.TickerFunc(niceTicks)
	return svgOf(p, chartWidth, vg.Points(260), title)
}

// --- lines over time ---------------------------------------------------------------------

// timeLines draws one step line per series of (unix seconds, value) points.
func timeLines(title, yLabel string, names []string, series []plotter.XYs) template.HTML {
	p := newPlot(title, "time (UTC)", yLabel)
	p.X.Tick.Marker = plot.TickerFunc(timeTicks)
	p.Add(plotter.NewGrid())
	p.Legend.Left = true
	for i, xy := range series {
		l, err := plotter.NewLine(xy)
		if err != nil {
			continue
		}
		l.StepStyle = plotter.PostStep
		l.LineStyle = draw.LineStyle{Color: seriesColor(i), Width: vg.Points(1.5), Dashes: lineDash(i)}
		p.Add(l)
		p.Legend.Add(names[i], l)
	}
	padTime(&p.X)
	p.Y.Min = 0
	p.Y.Tick.Marker = plot.TickerFunc(niceTicks)
	return svgOf(p, chartWidth, vg.Points(260), title)
}

// timeSteps are the tick spacings of a time axis, in seconds.
var timeSteps = []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800,
	21600, 43200, 86400, 2 * 86400, 7 * 86400, 14 * 86400, 28 * 86400, 91 * 86400, 365 * 86400}

// timeTicks marks a time axis (unix seconds, UTC) at most about six times, at round
// multiples of a step from timeSteps, each label as fine as the step (seconds when the
// step is under a minute): a short campaign gets distinct labels rather than one
// repeated ("11-25 12:52" three times, which plot.TimeTicks gave).
func timeTicks(lo, hi float64) []plot.Tick {
	step := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if (hi-lo)/s <= 6 {
			step = s
			break
		}
	}
	format := "01-02\n15:04"
	switch {
	case step < 60:
		format = "01-02\n15:04:05"
	case step >= 86400:
		format = "2006-01-02"
	}
	var ts []plot.Tick
	for x := math.Ceil(lo/step) * step; x <= hi; x += step {
		ts = append(ts, plot.Tick{Value: x, Label: time.Unix(int64(x), 0).UTC().Format(format)})
	}
	return ts
}

// padTime widens a time axis a little on both sides, so the first and last labels are not
// cut at the edges of the drawing, and to a minute at least (all points at one moment:
// an imported batch).
func padTime(a *plot.Axis) {
	if a.Max-a.Min < 60 {
		mid := (a.Min + a.Max) / 2
		a.Min, a.Max = mid-30, mid+30
	}
	pad := (a.Max - a.Min) * 0.06
	a.Min -= pad
	a.Max += pad
}

// pointLines draws one line with markers per series of (x, y) points, y over [yMin, yMax].
func pointLines(title, xLabel, yLabel string, names []string, series []plotter.XYs, yMin, yMax float64) template.HTML {
	p := newPlot(title, xLabel, yLabel)
	p.Add(plotter.NewGrid())
	for i, xy := range series {
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			continue
		}
		l.LineStyle = draw.LineStyle{Color: seriesColor(i), Width: vg.Points(1.5), Dashes: lineDash(i)}
		pts.GlyphStyle = draw.GlyphStyle{Color: seriesColor(i), Radius: vg.Points(3), Shape: seriesGlyph(i)}
		p.Add(l, pts)
		p.Legend.Add(names[i], l, pts)
	}
	p.Legend.Left = true
	p.Legend.Top = false
	p.X.Tick.Marker = plot.TickerFunc(integerTicks)
	p.Y.Min, p.Y.Max = yMin, yMax
	p.Y.Tick.Marker = plot.TickerFunc(niceTicks)
	return svgOf(p, chartWidth, vg.Points(260), title)
}

// integerTicks marks whole numbers (turn positions, object counts), at most about ten.
func integerTicks(lo, hi float64) []plot.Tick {
	step := math.Max(1, niceStep((hi-lo)/10))
	var ts []plot.Tick
	for x := math.Ceil(lo/step) * step; x <= hi; x += step {
		ts = append(ts, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'f', 0, 64)})
	}
	return ts
}

// niceTicks marks 1, 2 or 5 times a power of ten, about five major ticks, labelled
// without trailing zeros.
func niceTicks(lo, hi float64) []plot.Tick {
	step := niceStep((hi - lo) / 5)
	// As many decimals as the step has (0.2 → 1), so 3 × 0.2 reads 0.6.
	decimals := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	var ts []plot.Tick
	for x := math.Ceil(lo/step) * step; x <= hi+step*1e-9; x += step {
		v := math.Round(x/step) * step
		if v == 0 {
			v = 0 // not -0
		}
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', decimals, 64)})
		for m := 1; m < 5; m++ {
			if mx := v + float64(m)*step/5; mx < hi {
				ts = append(ts, plot.Tick{Value: mx})
			}
		}
	}
	return ts
}

// cleanLabel shortens a label for an axis; the table keeps the full text.
func cleanLabel(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 28 {
		return string(r[:27]) + "…"
	}
	return s
}
