package failover

import (
	"fmt"
	"image/color"
	"os"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// plotBucket is the width of the throughput and consumed bins.
const plotBucket = 100 * time.Millisecond

var (
	faultColor   = color.RGBA{R: 200, A: 255}
	recoverColor = color.RGBA{G: 150, A: 255}
)

// WritePNG draws the scenario to path: the send latency of every
// acknowledged record over its send time, the acknowledgements per
// second, and the records consumed so far, each with the fault (red) and
// recovery (green, every ISR full) moments marked.
func (sc *Scenario) WritePNG(path string) error {
	origin := sc.Start.UnixNano()
	sec := func(ns int64) float64 { return float64(ns-origin) / 1e9 }

	lat := make(plotter.XYs, 0, len(sc.acks))
	var end int64
	for _, a := range sc.acks {
		end = max(end, a.DoneNs)
		if !a.Err {
			lat = append(lat, plotter.XY{X: sec(a.SentNs), Y: float64(a.DoneNs-a.SentNs) / 1e6})
		}
	}
	if len(sc.arrivals) > 0 {
		end = max(end, sc.arrivals[len(sc.arrivals)-1])
	}
	bins := int((end-origin)/int64(plotBucket)) + 1
	rate := make([]float64, max(bins, 1))
	for _, a := range sc.acks {
		if !a.Err && a.DoneNs >= origin {
			rate[(a.DoneNs-origin)/int64(plotBucket)] += float64(time.Second / plotBucket)
		}
	}
	thr := make(plotter.XYs, len(rate))
	for i, v := range rate {
		thr[i] = plotter.XY{X: float64(i) * plotBucket.Seconds(), Y: v}
	}
	cons := make(plotter.XYs, 0, 2*len(sc.arrivals))
	total := 0.0
	for i, t := range sc.arrivals { // a step at each poll's records
		cons = append(cons, plotter.XY{X: sec(t), Y: total})
		total += float64(sc.counts[i])
		cons = append(cons, plotter.XY{X: sec(t), Y: total})
	}

	panels := []struct {
		title, y string
		data     plotter.XYs
		scatter  bool
	}{
		{strings.TrimSpace(fmt.Sprintf("%s fault %s: send latency", sc.system, sc.Fault)), "ms", lat, true},
		{"acknowledged per second", "records/s", thr, false},
		{"consumed", "records", cons, false},
	}
	xMax := sec(end)
	for _, rd := range sc.Rounds {
		if !rd.RecoveredAt.IsZero() {
			xMax = max(xMax, sec(rd.RecoveredAt.UnixNano()))
		}
	}
	plots := make([][]*plot.Plot, len(panels))
	for i, pn := range panels {
		p := plot.New()
		p.Title.Text, p.X.Label.Text, p.Y.Label.Text = pn.title, "seconds", pn.y
		if err := addSeries(p, pn.data, pn.scatter); err != nil {
			return err
		}
		if err := sc.addMarks(p, pn.data, sec); err != nil {
			return err
		}
		p.X.Min, p.X.Max, p.Y.Min = 0, xMax*1.02, 0
		plots[i] = []*plot.Plot{p}
	}
	img := vgimg.New(vg.Points(800), vg.Points(900))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(6), PadY: vg.Points(12)}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("picture: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("picture %s: %w", path, err)
	}
	return f.Close()
}

func addSeries(p *plot.Plot, data plotter.XYs, scatter bool) error {
	if len(data) == 0 {
		return nil
	}
	if scatter {
		s, err := plotter.NewScatter(data)
		if err != nil {
			return err
		}
		s.GlyphStyle.Radius = vg.Points(1)
		p.Add(s)
		return nil
	}
	l, err := plotter.NewLine(data)
	if err != nil {
		return err
	}
	p.Add(l)
	return nil
}

// addMarks draws a vertical line at every fault and recovery moment.
func (sc *Scenario) addMarks(p *plot.Plot, data plotter.XYs, sec func(int64) float64) error {
	top := 1.0
	for _, d := range data {
		top = max(top, d.Y)
	}
	for _, rd := range sc.Rounds {
		for _, m := range []struct {
			at time.Time
			c  color.Color
		}{{rd.FaultAt, faultColor}, {rd.RecoveredAt, recoverColor}} {
			if m.at.IsZero() {
				continue
			}
			x := sec(m.at.UnixNano())
			l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: top}})
			if err != nil {
				return err
			}
			l.Color = m.c
			l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
			p.Add(l)
		}
	}
	return nil
}
