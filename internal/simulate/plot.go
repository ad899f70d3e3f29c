package simulate

import (
	"fmt"
	"image/color"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot draws a result into an SVG file: demand against capacity (records/s) above, the
// replicas of each resource below, over the same time axis in minutes.
func Plot(r *Result, path string) error {
	load := plot.New()
	load.Title.Text = "Demand and capacity"
	load.Y.Label.Text = "records/s"
	load.X.Label.Text = "minutes"
	load.Legend.Top = true
	replicas := plot.New()
	replicas.Title.Text = "Replicas"
	replicas.Y.Label.Text = "count"
	replicas.X.Label.Text = "minutes"
	replicas.Legend.Top = true

	n := len(r.Series)
	demand, capacity := make(plotter.XYs, n), make(plotter.XYs, n)
	brokers, executors, dataNodes := make(plotter.XYs, n), make(plotter.XYs, n), make(plotter.XYs, n)
	for i, s := range r.Series {
		x := s.Time / 60
		demand[i] = plotter.XY{X: x, Y: s.Demand}
		capacity[i] = plotter.XY{X: x, Y: s.Capacity}
		brokers[i] = plotter.XY{X: x, Y: float64(s.Replicas.Brokers)}
		executors[i] = plotter.XY{X: x, Y: float64(s.Replicas.Executors)}
		dataNodes[i] = plotter.XY{X: x, Y: float64(s.Replicas.DataNodes)}
	}
	if err := addLines(load, []series{{"demand", demand, color.RGBA{R: 200, A: 255}},
		{"capacity", capacity, color.RGBA{B: 200, A: 255}}}); err != nil {
		return err
	}
	if err := addLines(replicas, []series{{"brokers", brokers, color.RGBA{R: 200, G: 100, A: 255}},
		{"executors", executors, color.RGBA{G: 150, A: 255}}, {"data nodes", dataNodes, color.RGBA{B: 200, R: 120, A: 255}}}); err != nil {
		return err
	}
	load.Y.Min = 0
	replicas.Y.Min = 0

	const width, height = 24 * vg.Centimeter, 18 * vg.Centimeter
	canvas := vgsvg.New(width, height)
	plots := [][]*plot.Plot{{load}, {replicas}}
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Centimeter / 2, PadTop: vg.Centimeter / 4, PadBottom: vg.Centimeter / 4}
	canvases := plot.Align(plots, tiles, draw.New(canvas))
	load.Draw(canvases[0][0])
	replicas.Draw(canvases[1][0])

	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := canvas.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

type series struct {
	name  string
	xys   plotter.XYs
	color color.Color
}

func addLines(p *plot.Plot, ss []series) error {
	for _, s := range ss {
		l, err := plotter.NewLine(s.xys)
		if err != nil {
			return err
		}
		l.Color = s.color
		l.Width = vg.Points(1.2)
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	return nil
}
