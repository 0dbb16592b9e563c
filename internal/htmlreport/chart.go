package htmlreport

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart sizes, points. The SVG scales to the page width; these set the
// proportions and the size of the text relative to the chart.
const (
	chartW   = 640
	chartH   = 260
	maxPts   = 600 // a series longer than this is averaged down to it
	fontSize = 9
)

// palette is Okabe and Ito's colour-blind-safe palette (yellow left out:
// too pale on white), then grey.
var palette = []color.Color{
	rgb(0x00, 0x72, 0xB2), rgb(0xD5, 0x5E, 0x00), rgb(0x00, 0x9E, 0x73), rgb(0xCC, 0x79, 0xA7),
	rgb(0xE6, 0x9F, 0x00), rgb(0x56, 0xB4, 0xE9), rgb(0x00, 0x00, 0x00), rgb(0x99, 0x99, 0x99),
}

func rgb(r, g, b uint8) color.Color { return color.RGBA{R: r, G: g, B: b, A: 0xff} }

// Series is one line of a chart: Y[i] at X[i]; a NaN in Y is a gap (not
// measured there).
type Series struct {
	Name string
	X, Y []float64
}

// LineChart describes a line chart with an optional second Y axis on the
// right; Stacked draws the (left-axis) series as a stacked area instead.
type LineChart struct {
	Title          string
	XLabel, YLabel string
	Series         []Series
	Y2Label        string   // second axis (right); empty: none
	Series2        []Series // drawn dashed, against the right axis
	Stacked        bool
	Points         bool // mark each point (steps)
	LogX           bool // logarithmic X axis (geometric ramps)
	// Lines are horizontal reference lines on the left axis (e.g. a
	// device's latency), drawn dotted.
	Lines []RefLine
}

// RefLine is a horizontal reference line.
type RefLine struct {
	Name  string
	Value float64
}

// BarChart describes a bar chart: one bar per label, an optional error
// bar of ± Err around each value (NaN: none).
type BarChart struct {
	Title  string
	YLabel string
	Labels []string
	Values []float64 // NaN: not measured, no bar
	Err    []float64
	// Stacks, if set, replace Values: each series is one layer of every
	// bar (Y[i] for label i, NaN or ≤ 0: none), stacked in order, with a
	// legend entry per series.
	Stacks []Series
	// YMax fixes the top of the Y axis (e.g. 100 for shares); 0: from the data.
	YMax float64
}

// stackedSVG draws c.Stacks as stacked bars.
func (c BarChart) stackedSVG() (string, error) {
	p := newPlot(c.Title, "", c.YLabel)
	w := vg.Points(math.Min(60, 0.6*chartW/float64(max(len(c.Labels), 1))))
	tops := make([]float64, len(c.Labels))
	var below *plotter.BarChart
	var legend []legendEntry
	for k, s := range c.Stacks {
		vals := make(plotter.Values, len(c.Labels))
		for i := range vals {
			if i < len(s.Y) && !math.IsNaN(s.Y[i]) && s.Y[i] > 0 {
				vals[i] = s.Y[i]
				tops[i] += s.Y[i]
			}
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return "", fmt.Errorf("chart %q: %w", c.Title, err)
		}
		col := palette[k%len(palette)]
		bars.Color = col
		bars.LineStyle.Width = 0
		if below != nil {
			bars.StackOn(below)
		}
		below = bars
		p.Add(bars)
		legend = append(legend, legendEntry{name: s.Name, fill: col})
	}
	var ymax float64
	for _, t := range tops {
		ymax = math.Max(ymax, t)
	}
	p.NominalX(c.Labels...)
	p.X.Min, p.X.Max = -0.5, float64(len(c.Labels))-0.5
	p.Y.Min, p.Y.Max = 0, niceMax(ymax)
	if c.YMax > 0 {
		p.Y.Max = c.YMax
	}
	return render(p, legend, nil, c.Title)
}

// legendEntry is one item of the legend drawn under a chart.
type legendEntry struct {
	name  string
	line  *draw.LineStyle
	fill  color.Color
	right bool // against the right axis
}

func textStyle(size float64) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(font.Font{Typeface: "Liberation", Variant: "Sans"}, vg.Length(size)),
		Handler: plot.DefaultTextHandler,
	}
}

// newPlot returns a plot with ceiling's fonts and grid.
func newPlot(title, xl, yl string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle = textStyle(fontSize + 2)
	p.Title.TextStyle.XAlign = draw.XCenter
	p.Title.TextStyle.YAlign = draw.YTop
	p.Title.Padding = 6
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = textStyle(fontSize).Font
		a.Tick.Label.Font = textStyle(fontSize - 1).Font
		a.Padding = 0
	}
	p.X.Label.Text, p.Y.Label.Text = xl, yl
	p.X.Tick.Marker, p.Y.Tick.Marker = niceTicks{}, niceTicks{}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xdd}
	grid.Horizontal.Color = color.Gray{Y: 0xdd}
	p.Add(grid)
	return p
}

// lineStyle is the style of the i-th series; dashed for the right axis.
func lineStyle(i int, right bool) draw.LineStyle {
	ls := draw.LineStyle{Color: palette[i%len(palette)], Width: vg.Points(1.4)}
	if right {
		ls.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return ls
}

// segments splits s into runs of measured points (NaN is a gap), each
// averaged down to at most maxPts points overall.
func segments(s Series) []plotter.XYs {
	x, y := downsample(s.X, s.Y)
	var out []plotter.XYs
	var cur plotter.XYs
	for i := range x {
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			if len(cur) > 0 {
				out = append(out, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, plotter.XY{X: x[i], Y: y[i]})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// downsample averages consecutive points so that at most maxPts remain.
func downsample(x, y []float64) ([]float64, []float64) {
	n := min(len(x), len(y))
	if n <= maxPts {
		return x[:n], y[:n]
	}
	k := (n + maxPts - 1) / maxPts
	var ox, oy []float64
	for i := 0; i < n; i += k {
		j := min(i+k, n)
		var sx, sy float64
		cnt := 0
		for _, v := range y[i:j] {
			if !math.IsNaN(v) {
				sy += v
				cnt++
			}
		}
		for _, v := range x[i:j] {
			sx += v
		}
		ox = append(ox, sx/float64(j-i))
		if cnt == 0 {
			oy = append(oy, math.NaN())
		} else {
			oy = append(oy, sy/float64(cnt))
		}
	}
	return ox, oy
}

// maxOf returns the largest finite Y over ss (0 if none).
func maxOf(ss []Series) float64 {
	m := 0.0
	for _, s := range ss {
		for _, v := range s.Y {
			if !math.IsNaN(v) && !math.IsInf(v, 0) && v > m {
				m = v
			}
		}
	}
	return m
}

// hasData reports whether any series has a measured point.
func hasData(ss []Series) bool {
	for _, s := range ss {
		for _, v := range s.Y {
			if !math.IsNaN(v) {
				return true
			}
		}
	}
	return false
}

// niceMax rounds v up to 1, 2, 2.5 or 5 × a power of ten, so the axis ends
// on a round number; 1 when v is not positive.
func niceMax(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	v *= 1.05
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// SVG renders the chart.
func (c LineChart) SVG() (string, error) {
	p := newPlot(c.Title, c.XLabel, c.YLabel)
	var legend []legendEntry
	if c.Stacked {
		legend = addStacked(p, c.Series)
	} else {
		for i, s := range c.Series {
			if !hasData([]Series{s}) {
				continue
			}
			ls := lineStyle(i, false)
			if err := c.addSeries(p, s, ls); err != nil {
				return "", err
			}
			legend = append(legend, legendEntry{name: s.Name, line: &ls})
		}
	}
	ymax := maxOf(c.Series)
	if c.Stacked {
		ymax = maxOf(stack(c.Series))
	}
	for _, r := range c.Lines {
		ymax = math.Max(ymax, r.Value)
	}
	p.Y.Min, p.Y.Max = 0, niceMax(ymax)
	for j, r := range c.Lines {
		ls := draw.LineStyle{Color: palette[(len(c.Series)+j)%len(palette)], Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(1.5), vg.Points(2.5)}}
		fn := plotter.NewFunction(func(float64) float64 { return r.Value })
		fn.LineStyle = ls
		p.Add(fn)
		legend = append(legend, legendEntry{name: r.Name, line: &ls})
	}
	var right *rightAxis
	if c.Y2Label != "" && hasData(c.Series2) {
		right = &rightAxis{label: c.Y2Label, max: niceMax(maxOf(c.Series2))}
		scale := p.Y.Max / right.max
		for i, s := range c.Series2 {
			if !hasData([]Series{s}) {
				continue
			}
			ls := lineStyle(len(c.Series)+len(c.Lines)+i, true)
			scaled := Series{Name: s.Name, X: s.X, Y: make([]float64, len(s.Y))}
			for k, v := range s.Y {
				scaled.Y[k] = v * scale
			}
			if err := c.addSeries(p, scaled, ls); err != nil {
				return "", err
			}
			legend = append(legend, legendEntry{name: s.Name + " (right axis)", line: &ls, right: true})
		}
	}
	fixXRange(p)
	if c.LogX && p.X.Min > 0 {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
	}
	return render(p, legend, right, c.Title)
}

// fixXRange gives a degenerate (single-point) X range some width.
func fixXRange(p *plot.Plot) {
	if p.X.Min == p.X.Max {
		p.X.Min, p.X.Max = p.X.Min-1, p.X.Max+1
	}
	if math.IsInf(p.X.Min, 0) || math.IsInf(p.X.Max, 0) {
		p.X.Min, p.X.Max = 0, 1
	}
}

// stack returns the cumulative sums of ss (series i = ss[0] + … + ss[i]);
// a gap counts as 0 in the sums of the layers above but stays a gap in
// its own layer.
func stack(ss []Series) []Series {
	out := make([]Series, len(ss))
	var acc []float64
	for i, s := range ss {
		if acc == nil {
			acc = make([]float64, len(s.Y))
		}
		ys := make([]float64, len(s.Y))
		for k, v := range s.Y {
			if k < len(acc) && !math.IsNaN(v) {
				acc[k] += v
			}
			switch {
			case k >= len(acc):
			case math.IsNaN(v):
				ys[k] = math.NaN() // not measured here: a gap in this layer
			default:
				ys[k] = acc[k]
			}
		}
		out[i] = Series{Name: s.Name, X: s.X, Y: ys}
	}
	return out
}

// addStacked draws ss as stacked areas: the cumulative layers from the top
// down, each filled to the axis, so each band shows one series.
func addStacked(p *plot.Plot, ss []Series) []legendEntry {
	layers := stack(ss)
	var legend []legendEntry
	for i := len(layers) - 1; i >= 0; i-- {
		col := palette[i%len(palette)]
		for _, seg := range segments(layers[i]) {
			l, err := plotter.NewLine(seg)
			if err != nil {
				continue
			}
			l.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(0.6)}
			l.FillColor = col
			p.Add(l)
		}
	}
	for i, s := range ss {
		legend = append(legend, legendEntry{name: s.Name, fill: palette[i%len(palette)]})
	}
	return legend
}

// rightAxis is a second Y axis from 0 to max, drawn on the right of the
// data area.
type rightAxis struct {
	label string
	max   float64
}

// SVG renders the bar chart.
func (c BarChart) SVG() (string, error) {
	if len(c.Stacks) > 0 {
		return c.stackedSVG()
	}
	p := newPlot(c.Title, "", c.YLabel)
	vals := make(plotter.Values, len(c.Values))
	var ymax float64
	for i, v := range c.Values {
		if math.IsNaN(v) {
			continue
		}
		vals[i] = v
		top := v
		if i < len(c.Err) && !math.IsNaN(c.Err[i]) {
			top += c.Err[i]
		}
		ymax = math.Max(ymax, top)
	}
	w := vg.Points(math.Min(60, 0.6*chartW/float64(max(len(vals), 1))))
	bars, err := plotter.NewBarChart(vals, w)
	if err != nil {
		return "", fmt.Errorf("chart %q: %w", c.Title, err)
	}
	bars.Color = palette[0]
	bars.LineStyle.Width = 0
	p.Add(bars)
	var errs errPoints
	for i := range c.Values {
		if i < len(c.Err) && !math.IsNaN(c.Err[i]) && !math.IsNaN(c.Values[i]) {
			errs = append(errs, errPoint{x: float64(i), y: c.Values[i], e: c.Err[i]})
		}
	}
	var legend []legendEntry
	if len(errs) > 0 {
		eb, err := plotter.NewYErrorBars(errs)
		if err != nil {
			return "", fmt.Errorf("chart %q: %w", c.Title, err)
		}
		eb.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1.2)}
		p.Add(eb)
		ls := eb.LineStyle
		legend = append(legend, legendEntry{name: "± one standard deviation over the repeats", line: &ls})
	}
	p.NominalX(c.Labels...)
	p.X.Min, p.X.Max = -0.5, float64(len(c.Values))-0.5
	p.Y.Min, p.Y.Max = 0, niceMax(ymax)
	return render(p, legend, nil, c.Title)
}

type errPoint struct{ x, y, e float64 }
type errPoints []errPoint

func (e errPoints) Len() int                    { return len(e) }
func (e errPoints) XY(i int) (float64, float64) { return e[i].x, e[i].y }
func (e errPoints) YError(i int) (float64, float64) {
	return e[i].e, e[i].e
}

// render draws p with the legend underneath (and the right axis, if any)
// into an SVG fragment fit to inline in HTML.
func render(p *plot.Plot, legend []legendEntry, right *rightAxis, title string) (string, error) {
	cv := vgsvg.New(chartW, chartH)
	dc := draw.New(cv)
	// A background under everything (legend and right axis included), so
	// the dark-mode filter inverts the whole chart alike.
	dc.FillPolygon(color.White, []vg.Point{{X: dc.Min.X, Y: dc.Min.Y}, {X: dc.Max.X, Y: dc.Min.Y}, {X: dc.Max.X, Y: dc.Max.Y}, {X: dc.Min.X, Y: dc.Max.Y}})
	ts := textStyle(fontSize)
	legH := legendHeight(legend, ts, dc.Max.X-dc.Min.X)
	area := draw.Crop(dc, 0, 0, legH, 0)
	var rightW vg.Length
	var ticks []plot.Tick
	tickStyle := textStyle(fontSize - 1)
	if right != nil {
		ticks = niceTicks{}.Ticks(0, right.max)
		var wmax vg.Length
		for _, t := range ticks {
			if t.Label != "" {
				wmax = max(wmax, tickStyle.Width(t.Label))
			}
		}
		rightW = wmax + ts.Height(right.label) + 12
		area = draw.Crop(area, 0, -rightW, 0, 0)
	} else {
		area = draw.Crop(area, 0, -12, 0, 0) // room for the last X tick label
	}
	p.Draw(area)
	da := p.DataCanvas(area)
	if right != nil {
		drawRightAxis(dc, da, right, ticks, tickStyle, ts)
	}
	drawLegend(dc, legend, ts, legH)
	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return "", fmt.Errorf("chart %q: %w", title, err)
	}
	return inlineSVG(buf.String(), title), nil
}

func drawRightAxis(dc draw.Canvas, da draw.Canvas, r *rightAxis, ticks []plot.Tick, tickStyle, ts text.Style) {
	axis := draw.LineStyle{Color: color.Black, Width: vg.Points(0.5)}
	x := da.Max.X
	dc.StrokeLine2(axis, x, da.Min.Y, x, da.Max.Y)
	tickStyle.XAlign, tickStyle.YAlign = draw.XLeft, draw.YCenter
	for _, t := range ticks {
		if t.Value < 0 || t.Value > r.max {
			continue
		}
		y := da.Y(t.Value / r.max)
		if t.Label == "" {
			dc.StrokeLine2(axis, x, y, x+2, y)
			continue
		}
		dc.StrokeLine2(axis, x, y, x+4, y)
		dc.FillText(tickStyle, vg.Point{X: x + 6, Y: y}, t.Label)
	}
	ls := ts
	ls.Rotation = -math.Pi / 2
	ls.XAlign, ls.YAlign = draw.XCenter, draw.YTop
	dc.FillText(ls, vg.Point{X: dc.Max.X - 2, Y: (da.Min.Y + da.Max.Y) / 2}, r.label)
}

// legend layout: entries side by side, wrapped to the chart width.
const (
	legThumb = 18
	legGap   = 14
	legPad   = 4
)

func legendRows(entries []legendEntry, ts text.Style, width vg.Length) [][]legendEntry {
	var rows [][]legendEntry
	var cur []legendEntry
	var x vg.Length
	for _, e := range entries {
		w := legThumb + 4 + textWidth(ts, e.name) + legGap
		if len(cur) > 0 && x+w > width-2*legPad {
			rows = append(rows, cur)
			cur, x = nil, 0
		}
		cur = append(cur, e)
		x += w
	}
	if len(cur) > 0 {
		rows = append(rows, cur)
	}
	return rows
}

func legendHeight(entries []legendEntry, ts text.Style, width vg.Length) vg.Length {
	rows := legendRows(entries, ts, width)
	if len(rows) == 0 {
		return 0
	}
	return vg.Length(len(rows))*(ts.Height("M")+4) + 2*legPad
}

func drawLegend(dc draw.Canvas, entries []legendEntry, ts text.Style, h vg.Length) {
	rows := legendRows(entries, ts, dc.Max.X-dc.Min.X)
	rowH := ts.Height("M") + 4
	ts.XAlign, ts.YAlign = draw.XLeft, draw.YCenter
	for r, row := range rows {
		y := dc.Min.Y + h - legPad - rowH*vg.Length(r) - rowH/2
		x := dc.Min.X + legPad + 30
		for _, e := range row {
			switch {
			case e.fill != nil:
				dc.FillPolygon(e.fill, []vg.Point{{X: x, Y: y - 4}, {X: x + legThumb, Y: y - 4}, {X: x + legThumb, Y: y + 4}, {X: x, Y: y + 4}})
			case e.line != nil:
				dc.StrokeLine2(*e.line, x, y, x+legThumb, y)
			}
			dc.FillText(ts, vg.Point{X: x + legThumb + 4, Y: y}, e.name)
			x += legThumb + 4 + textWidth(ts, e.name) + legGap
		}
	}
}

var (
	svgProlog = regexp.MustCompile(`(?s)^.*?<svg `)
	svgSize   = regexp.MustCompile(`^<svg width="[^"]*" height="[^"]*"`)
	fontFam   = regexp.MustCompile(`font-family:Liberation Sans;`)
)

// inlineSVG turns vgsvg's document into an element to inline in HTML:
// without the XML prolog, sized by CSS (the viewBox keeps the
// proportions), labelled for screen readers, and with font fallbacks for
// machines without the Liberation fonts (the labels were measured with
// Liberation Sans, whose metrics Arial shares).
func inlineSVG(doc, title string) string {
	s := svgProlog.ReplaceAllString(doc, "<svg ")
	s = svgSize.ReplaceAllString(s, fmt.Sprintf(`<svg class="chart" role="img" aria-label="%s"`, htmlAttr(title)))
	s = fontFam.ReplaceAllString(s, "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
	return strings.TrimSpace(s)
}

func htmlAttr(s string) string {
	r := strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", `<`, "&lt;", `>`, "&gt;")
	return r.Replace(s)
}

// textWidth is the width of s with some room to spare: the browser may
// draw the text in a wider fallback font than the one it was measured in.
func textWidth(ts text.Style, s string) vg.Length { return ts.Width(s) * 1.12 }

// niceTicks are gonum's default ticks labelled without trailing zeros and
// with thousands grouped (2,500 rather than 2500.00).
type niceTicks struct{}

// Ticks implements plot.Ticker.
func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label == "" {
			continue
		}
		v, err := strconv.ParseFloat(ts[i].Label, 64)
		if err != nil {
			continue
		}
		ts[i].Label = tickLabel(v)
	}
	return ts
}

func tickLabel(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if math.Abs(v) >= 10000 && !strings.ContainsAny(s, ".e") {
		return group(s)
	}
	return s
}

// addPoints marks each point of seg with a small circle when on.
func addPoints(p *plot.Plot, on bool, seg plotter.XYs, ls draw.LineStyle) error {
	if !on {
		return nil
	}
	sc, err := plotter.NewScatter(seg)
	if err != nil {
		return err
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: ls.Color, Radius: vg.Points(2.2), Shape: draw.CircleGlyph{}}
	p.Add(sc)
	return nil
}

// logTicks label the powers of ten and 2 and 5 times them.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		p := math.Pow(10, e)
		for _, m := range []float64{1, 2, 5} {
			v := m * p
			if v >= lo*0.999 && v <= hi*1.001 {
				ts = append(ts, plot.Tick{Value: v, Label: tickLabel(v)})
			}
		}
	}
	return ts
}

// addSeries draws s on p in style ls, one line per stretch of points with
// data (segments), with c's point markers.
func (c LineChart) addSeries(p *plot.Plot, s Series, ls draw.LineStyle) error {
	for _, seg := range segments(s) {
		l, err := plotter.NewLine(seg)
		if err != nil {
			return fmt.Errorf("chart %q: %w", c.Title, err)
		}
		l.LineStyle = ls
		p.Add(l)
		if err := addPoints(p, c.Points, seg, ls); err != nil {
			return fmt.Errorf("chart %q: %w", c.Title, err)
		}
	}
	return nil
}
