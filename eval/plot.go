package eval

import (
	"fmt"
	"image/color"
	"math"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Plot sizes.
const (
	plotW = 8.5 * vg.Inch
	plotH = 4.5 * vg.Inch
	// plotDPI makes the PNGs sharp on a high-density screen and keeps
	// them small.
	plotDPI = 110
)

var (
	colPositive = color.NRGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xa0}
	colNegative = color.NRGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0x80}
	colCurve    = color.NRGBA{A: 0xff}
)

// seriesStyle gives series i a colour and dash pattern of its own.
func seriesStyle(i int) draw.LineStyle {
	return draw.LineStyle{Color: plotutil.DarkColors[i%len(plotutil.DarkColors)], Width: vg.Points(1.6), Dashes: plotutil.Dashes(i / len(plotutil.DarkColors) * 2)}
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	return p
}

// figure is a grid of plots with one legend beside them.
type figure struct {
	plots  [][]*plot.Plot // rows of tiles; nil tiles stay empty
	legend *plot.Legend   // drawn to the right of the tiles; may be nil
	// legendW is the width kept for the legend.
	legendW vg.Length
}

func newLegend() *plot.Legend {
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.TextStyle.Font.Size = vg.Points(10)
	l.Padding = vg.Points(3)
	return &l
}

// single is a one-plot figure with a legend of width w.
func single(p *plot.Plot, l *plot.Legend, w vg.Length) figure {
	return figure{plots: [][]*plot.Plot{{p}}, legend: l, legendW: w}
}

// savePNG draws fig on a w × h canvas and writes it to path as PNG.
func savePNG(path string, w, h vg.Length, fig figure) error {
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(plotDPI))
	dc := draw.New(img)
	area := dc
	if fig.legend != nil {
		area = draw.Crop(dc, 0, -fig.legendW, 0, 0)
		lc := draw.Crop(dc, w-fig.legendW+vg.Millimeter*3, 0, 0, -vg.Millimeter*8)
		fig.legend.Draw(lc)
	}
	t := draw.Tiles{Rows: len(fig.plots), Cols: len(fig.plots[0]), PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 3}
	canvases := plot.Align(fig.plots, t, area)
	for j := range fig.plots {
		for i, p := range fig.plots[j] {
			if p != nil {
				p.Draw(canvases[j][i])
			}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func line(xys plotter.XYs, st draw.LineStyle) *plotter.Line {
	l, _ := plotter.NewLine(xys) // fails only on NaN or Inf, which callers leave out
	l.LineStyle = st
	return l
}

// prPlot draws the precision–recall curve of every score of r.
func prPlot(r *Result) figure {
	p := newPlot(fmt.Sprintf("Precision–recall by score: %s", r.Set.Name), "recall", "precision")
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1.02
	leg := newLegend()
	for i, c := range r.Curves {
		if len(c.PR) == 0 {
			continue
		}
		// A step curve: precision holds until the next threshold.
		xys := plotter.XYs{{X: 0, Y: c.PR[0].Precision}}
		for _, pt := range c.PR {
			xys = append(xys, plotter.XY{X: pt.Recall, Y: pt.Precision})
		}
		l := line(xys, seriesStyle(i))
		p.Add(l)
		leg.Add(c.Score.String(), l)
		leg.Add(fmt.Sprintf("   AP %s, AUC %s", num(c.AP), num(c.AUC)))
	}
	return single(p, leg, 2*vg.Inch)
}

// jaccardBins is the number of histogram bins over Jaccard [0, 1].
const jaccardBins = 40

// lshPlot draws the LSH S-curve P(candidate) = 1 − (1 − J^r)^b over the
// histograms of the positive and negative pairs' Jaccard (each summing
// to 1), with the share of positive pairs per bin that shared a band.
func lshPlot(r *Result, bands, rows int) figure {
	p := newPlot(fmt.Sprintf("LSH %d bands × %d rows: %s", bands, rows, r.Set.Name), "Jaccard resemblance of the shingle sets", "P(candidate); share of pairs")
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1.02
	leg := newLegend()
	var pos, neg [jaccardBins]float64
	var posCand, posAll [jaccardBins]float64
	var wPos, wNeg float64
	for _, pr := range r.Pairs {
		b := min(int(pr.Values[ScoreJaccard]*jaccardBins), jaccardBins-1)
		if pr.Label == Positive {
			pos[b] += pr.Weight
			wPos += pr.Weight
			posAll[b]++
			if pr.Candidate {
				posCand[b]++
			}
		} else {
			neg[b] += pr.Weight
			wNeg += pr.Weight
		}
	}
	hist := func(v *[jaccardBins]float64, total float64, fill color.Color) *plotter.Histogram {
		h := &plotter.Histogram{Width: 1.0 / jaccardBins, FillColor: fill}
		h.LineStyle.Width = 0
		for i, x := range v {
			h.Bins = append(h.Bins, plotter.HistogramBin{Min: float64(i) / jaccardBins, Max: float64(i+1) / jaccardBins, Weight: x / math.Max(total, 1e-300)})
		}
		return h
	}
	hn, hp := hist(&neg, wNeg, colNegative), hist(&pos, wPos, colPositive)
	p.Add(hn, hp)
	var curve plotter.XYs
	for i := 0; i <= 200; i++ {
		s := float64(i) / 200
		curve = append(curve, plotter.XY{X: s, Y: 1 - math.Pow(1-math.Pow(s, float64(rows)), float64(bands))})
	}
	l := line(curve, draw.LineStyle{Color: colCurve, Width: vg.Points(2)})
	leg.Add("P(candidate)", l)
	leg.Add(fmt.Sprintf("   = 1 − (1 − J^%d)^%d", rows, bands))
	leg.Add("positive pairs' Jaccard", hp)
	leg.Add(fmt.Sprintf("   (%.0f pairs, shares)", wPos))
	leg.Add("negative pairs' Jaccard", hn)
	leg.Add(fmt.Sprintf("   (%.0f pairs, shares)", wNeg))
	p.Add(l)
	var obs plotter.XYs
	for i := range posAll {
		if posAll[i] > 0 {
			obs = append(obs, plotter.XY{X: (float64(i) + 0.5) / jaccardBins, Y: posCand[i] / posAll[i]})
		}
	}
	if len(obs) > 0 {
		sc, _ := plotter.NewScatter(obs)
		sc.GlyphStyle = draw.GlyphStyle{Color: color.NRGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, Radius: vg.Points(3.5), Shape: draw.CrossGlyph{}}
		p.Add(sc)
		leg.Add("positive pairs that share", sc)
		leg.Add("   a band (observed, per bin)")
	}
	return single(p, leg, 2.2*vg.Inch)
}

// passagePlot draws, for each bin of copied length, the share of PAN13
// cases detected by a reported passage and the share whose (suspicious,
// source) pair was linked at all.
func passagePlot(res *PANResult) figure {
	title := "PAN13: cases detected by copied length"
	if res.Passages == 0 {
		title += " (no passages reported)"
	}
	p := newPlot(title, "copied length, characters of the suspicious document (cases)", "share of cases")
	p.Y.Min, p.Y.Max = 0, 1.05
	leg := newLegend()
	var det, lnk plotter.XYs
	var ticks []plot.Tick
	for i, b := range res.ByLength {
		if b.Cases == 0 {
			continue
		}
		x := float64(i)
		det = append(det, plotter.XY{X: x, Y: float64(b.Detected) / float64(b.Cases)})
		lnk = append(lnk, plotter.XY{X: x, Y: float64(b.Linked) / float64(b.Cases)})
		label := fmt.Sprintf("%d–%d", b.Lo, b.Hi)
		switch {
		case b.Lo == 0:
			label = fmt.Sprintf("< %d", b.Hi)
		case b.Hi >= 1<<30:
			label = fmt.Sprintf("≥ %d", b.Lo)
		}
		ticks = append(ticks, plot.Tick{Value: x, Label: fmt.Sprintf("%s\n(%d)", label, b.Cases)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.3, float64(len(res.ByLength))-0.7
	for i, s := range []struct {
		name string
		xys  plotter.XYs
	}{{"case detected by a", det}, {"its (suspicious, source)", lnk}} {
		l, pts, _ := plotter.NewLinePoints(s.xys)
		l.LineStyle = seriesStyle(i)
		pts.GlyphStyle.Color = l.LineStyle.Color
		pts.GlyphStyle.Shape = plotutil.Shape(i)
		p.Add(l, pts)
		leg.Add(s.name, l, pts)
		leg.Add([]string{"   reported passage", "   pair linked at all"}[i])
	}
	return single(p, leg, 2*vg.Inch)
}

// plots returns the file names and figures of r's plots.
func plots(r *Result, bands, rows int) (names []string, figs []figure) {
	short := r.Set.Short()
	if len(r.Pairs) > 0 {
		names = append(names, "pr-"+short+".png", "lsh-"+short+".png")
		figs = append(figs, prPlot(r), lshPlot(r, bands, rows))
	}
	if r.PAN != nil {
		names = append(names, "passages-"+short+".png")
		figs = append(figs, passagePlot(r.PAN))
	}
	if r.Sites != nil {
		names = append(names, "flagged-"+short+".png")
		figs = append(figs, flaggedPlot(r))
	}
	return names, figs
}

// plotInch is a length unit for callers outside this file.
const plotInch = vg.Inch

// noiseLegend names the lines of the synthetic plots, one per noise rate.
func (r *SynthResult) noiseLegend() *plot.Legend {
	leg := newLegend()
	for j, nz := range r.Config.Noise {
		l := line(plotter.XYs{{}}, seriesStyle(j))
		leg.Add(fmt.Sprintf("noise %g", nz), l)
	}
	return leg
}

// sweepPlot draws value(i, j) over the overlaps i, one line per noise
// rate j.
func (r *SynthResult) sweepPlot(title, y string, value func(c *SynthCell) (float64, bool)) *plot.Plot {
	p := newPlot(title, "overlap (%)", y)
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Min, p.X.Max = 0, 100
	for j := range r.Config.Noise {
		var xys plotter.XYs
		for i, ov := range r.Config.Overlaps {
			if v, ok := value(r.Cell(i, j)); ok {
				xys = append(xys, plotter.XY{X: 100 * ov, Y: v})
			}
		}
		if len(xys) > 0 {
			p.Add(line(xys, seriesStyle(j)))
		}
	}
	return p
}

func (r *SynthResult) scoresFigure() figure {
	const cols = 4
	var rows [][]*plot.Plot
	for s := range NumScores {
		if int(s)%cols == 0 {
			rows = append(rows, make([]*plot.Plot, cols))
		}
		y := "mean score"
		if s == ScoreHamming {
			y = "mean bits"
		}
		p := r.sweepPlot(s.String(), y, func(c *SynthCell) (float64, bool) { return c.Scores[s], c.Has[s] })
		if s != ScoreHamming {
			p.Y.Min, p.Y.Max = 0, 1
		}
		rows[len(rows)-1][int(s)%cols] = p
	}
	return figure{plots: rows, legend: r.noiseLegend(), legendW: 1.3 * vg.Inch}
}

func (r *SynthResult) detectionFigure() figure {
	var rows [][]*plot.Plot
	cols := 0
	for d, det := range r.Detectors {
		if d == 0 || det.Profile != r.Detectors[d-1].Profile {
			rows = append(rows, nil)
		}
		p := r.sweepPlot(det.String(), "share found", func(c *SynthCell) (float64, bool) { return c.Detected[d], true })
		p.Y.Min, p.Y.Max = 0, 1.02
		rows[len(rows)-1] = append(rows[len(rows)-1], p)
		cols = max(cols, len(rows[len(rows)-1]))
	}
	for i := range rows {
		for len(rows[i]) < cols {
			rows[i] = append(rows[i], nil)
		}
	}
	return figure{plots: rows, legend: r.noiseLegend(), legendW: 1.3 * vg.Inch}
}

// flaggedPlot draws the share of a site set's unique pages flagged, by
// the page's rank on its site, with the 2% target line.
func flaggedPlot(r *Result) figure {
	res := r.Sites
	p := newPlot(fmt.Sprintf("Unique pages flagged by rank on their site: %s", r.Set.Name), "page rank on its site", "unique pages flagged (%)")
	vals := make(plotter.Values, len(res.ByRank))
	var labels []string
	top := 5.0
	for i, b := range res.ByRank {
		if b.Unique > 0 {
			vals[i] = 100 * float64(b.Flagged) / float64(b.Unique)
		}
		top = math.Max(top, vals[i]*1.1)
		name := b.label()
		if b.Hi >= 1<<30 {
			name = fmt.Sprintf("%d+", b.Lo)
		}
		labels = append(labels, fmt.Sprintf("%s\n%d pages", name, b.Unique))
	}
	bars, _ := plotter.NewBarChart(vals, vg.Points(28)) // fails only on NaN or Inf
	bars.Color = colNegative
	bars.LineStyle.Width = 0
	p.Add(bars)
	p.NominalX(labels...)
	p.Y.Min, p.Y.Max = 0, top
	target := line(plotter.XYs{{X: -0.5, Y: 2}, {X: float64(len(vals)) - 0.5, Y: 2}}, draw.LineStyle{Color: colCurve, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}})
	p.Add(target)
	leg := newLegend()
	leg.Add("flagged share", bars)
	leg.Add("2% (target, all ranks)", target)
	return single(p, leg, 2*vg.Inch)
}
