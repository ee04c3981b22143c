package chart

import (
	"fmt"

	"gonum.org/v1/plot/vg"
)

// The smallest figure, in font sizes, that holds a title, tick labels, an axis label and a
// plotting area a reader can see: below it the labels overlap or squeeze the data to nothing.
const (
	minWidthFonts  = 16
	minHeightFonts = 10
)

// Check refuses a style whose figure is too small for its lettering to be read ("--width 2cm"
// at 10 pt would draw an empty frame), saying the smallest size that works.
func (s Style) Check() error {
	w, h, fs := s.size()
	minW, minH := minWidthFonts*fs, minHeightFonts*fs
	if w < minW {
		return fmt.Errorf("a figure %s wide cannot hold %g pt labels: give at least %s (16 times the font size), or a smaller font size", cm(w), float64(fs), cm(minW))
	}
	if s.Height != 0 && h < minH {
		return fmt.Errorf("a figure %s high cannot hold %g pt labels: give at least %s (10 times the font size), or a smaller font size", cm(h), float64(fs), cm(minH))
	}
	return nil
}

func cm(l vg.Length) string {
	return fmt.Sprintf("%.3gcm", float64(l/vg.Centimeter))
}
