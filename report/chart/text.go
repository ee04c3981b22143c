package chart

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/font/liberation"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// Text is drawn with Liberation Sans, which gonum/plot carries (metric-compatible with Arial, so
// an SVG viewer that substitutes Arial or Arimo lays it out the same). Characters it lacks (CJK
// group names) come from a fallback font found on the system or named by the user.
const (
	mainFace     font.Typeface = "Liberation"
	mainVariant  font.Variant  = "Sans"
	fallbackFace font.Typeface = "jikken-fallback"
)

// FallbackFontFiles are the places looked at, in order, for a font that draws what Liberation
// Sans cannot: Debian's and other distributions' Noto Sans CJK, then macOS and Windows fonts.
var FallbackFontFiles = []string{
	"/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
	"/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
	"/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc",
	"/usr/share/fonts/opentype/noto-cjk/NotoSansCJK-Regular.ttc",
	"/usr/share/fonts/truetype/noto/NotoSansCJK-Regular.ttc",
	"/System/Library/Fonts/Hiragino Sans GB.ttc",
	"/System/Library/Fonts/ヒラギノ角ゴシック W3.ttc",
	"/Library/Fonts/Arial Unicode.ttf",
	`C:\Windows\Fonts\msgothic.ttc`,
	`C:\Windows\Fonts\YuGothM.ttc`,
}

var (
	mainOnce sync.Once
	mainFont *opentype.Font
)

// liberationSans returns the regular Liberation Sans face gonum/plot embeds.
func liberationSans() *opentype.Font {
	mainOnce.Do(func() {
		for _, f := range liberation.Collection() {
			if f.Font.Typeface == mainFace && f.Font.Variant == mainVariant && f.Font.Weight == 0 && f.Font.Style == 0 {
				mainFont = f.Face
			}
		}
	})
	return mainFont
}

// fonts holds the faces a figure draws with.
type fonts struct {
	cache    *font.Cache
	fallback *opentype.Font // nil when every character is in Liberation Sans
	family   map[font.Typeface]string
}

// newFonts returns the fonts that draw every string in texts: Liberation Sans, plus a fallback
// font when some character is missing from it. fontFile names the fallback; when empty, the
// JIKKEN_FONT environment variable, then FallbackFontFiles are tried.
func newFonts(fontFile string, texts ...string) (*fonts, error) {
	main := liberationSans()
	f := &fonts{
		cache:  font.NewCache(font.Collection{{Font: font.Font{Typeface: mainFace, Variant: mainVariant}, Face: main}}),
		family: map[font.Typeface]string{mainFace: "'Liberation Sans', Arimo, Arial, Helvetica, sans-serif"},
	}
	var missing []rune
	var buf sfnt.Buffer
	for _, s := range texts {
		for _, r := range s {
			if !drawable(main, &buf, r) && !strings.ContainsRune(string(missing), r) {
				missing = append(missing, r)
			}
		}
	}
	if len(missing) == 0 && fontFile == "" {
		return f, nil
	}
	fb, name, err := loadFallback(fontFile, missing)
	if err != nil {
		if len(missing) == 0 {
			return nil, err
		}
		return nil, fmt.Errorf("no font here draws %q; install a CJK font (Debian/Ubuntu: apt-get install fonts-noto-cjk) or pass --font FILE (%v)", string(missing), err)
	}
	f.fallback = fb
	f.cache.Add(font.Collection{{Font: font.Font{Typeface: fallbackFace}, Face: fb}})
	f.family[fallbackFace] = fmt.Sprintf("'%s', 'Noto Sans CJK JP', 'Source Han Sans', 'Hiragino Sans', 'Yu Gothic', 'Microsoft YaHei', sans-serif", name)
	return f, nil
}

// drawable reports whether f has a glyph for r; control characters and spaces need none.
func drawable(f *opentype.Font, buf *sfnt.Buffer, r rune) bool {
	if unicode.IsControl(r) || unicode.IsSpace(r) {
		return true
	}
	i, err := f.GlyphIndex(buf, r)
	return err == nil && i != 0
}

// loadFallback opens the fallback font: file when given, else $JIKKEN_FONT, else the first of
// FallbackFontFiles that exists and draws every rune of need. A collection (.ttc) is searched
// for a face that draws them, preferring Japanese faces, whose glyphs suit most CJK names.
func loadFallback(file string, need []rune) (*opentype.Font, string, error) {
	candidates := FallbackFontFiles
	switch {
	case file != "":
		candidates = []string{file}
	case os.Getenv("JIKKEN_FONT") != "":
		candidates = []string{os.Getenv("JIKKEN_FONT")}
	}
	var errs []string
	for _, path := range candidates {
		data, err := os.ReadFile(path)
		if err != nil {
			if file != "" || !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err.Error())
			}
			continue
		}
		f, name, err := pickFace(data, need)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", path, err))
			continue
		}
		return f, name, nil
	}
	if len(errs) == 0 {
		return nil, "", fmt.Errorf("none of %s exists", strings.Join(candidates, ", "))
	}
	return nil, "", errors.New(strings.Join(errs, "; "))
}

// pickFace returns the face of a font file (or collection) that draws the most runes of need,
// preferring a Japanese face on a tie; runes no face draws come out as the font's missing-glyph
// box rather than failing the figure.
func pickFace(data []byte, need []rune) (*opentype.Font, string, error) {
	coll, err := opentype.ParseCollection(data)
	if err != nil {
		return nil, "", fmt.Errorf("not a font: %w", err)
	}
	var buf sfnt.Buffer
	var best *opentype.Font
	bestName, bestCount := "", -1
	for i := range coll.NumFonts() {
		f, err := coll.Font(i)
		if err != nil {
			continue
		}
		name, _ := f.Name(&buf, sfnt.NameIDFamily)
		if strings.Contains(name, "Mono") {
			continue
		}
		count := 0
		for _, r := range need {
			if drawable(f, &buf, r) {
				count++
			}
		}
		if count > bestCount || (count == bestCount && strings.HasSuffix(name, " JP") && !strings.HasSuffix(bestName, " JP")) {
			best, bestName, bestCount = f, name, count
		}
	}
	if best == nil || (bestCount == 0 && len(need) > 0) {
		return nil, "", fmt.Errorf("no face draws any of %q", string(need))
	}
	return best, bestName, nil
}

// handler lays text out with the figure's fonts: each line is cut into runs drawn with Liberation
// Sans or, for the characters it lacks, the fallback. It follows text.Style's geometry exactly
// (Rectangle), so what gonum reserves for a label is where the label is drawn.
type handler struct{ f *fonts }

var _ text.Handler = handler{}

func (h handler) Cache() *font.Cache { return h.f.cache }

// Extents are Liberation Sans': CJK ideographs keep within the em box from -0.12 to 0.88 em,
// inside its descent and ascent (0.212 and 0.905 em), whereas a CJK font's own line metrics
// (1.16 and 0.288 for Noto Sans CJK) would space every line of a figure loosely.
func (h handler) Extents(fnt font.Font) font.Extents {
	f := h.face(mainFace, fnt.Size)
	return f.Extents()
}

func (h handler) face(tf font.Typeface, size vg.Length) font.Face {
	fnt := font.Font{Typeface: tf, Size: size}
	if tf == mainFace {
		fnt.Variant = mainVariant
	}
	return h.f.cache.Lookup(fnt, size)
}

// font is the main face at size, the font every text style of a figure names.
func (h handler) font(size vg.Length) font.Font {
	return font.Font{Typeface: mainFace, Variant: mainVariant, Size: size}
}

func (h handler) Lines(txt string) []string {
	return strings.Split(strings.TrimRight(txt, "\n"), "\n")
}

// run is a piece of a line drawn with one face.
type run struct {
	face font.Face
	text string
}

func (h handler) runs(line string, size vg.Length) []run {
	main := h.face(mainFace, size)
	if h.f.fallback == nil {
		return []run{{main, line}}
	}
	fb := h.face(fallbackFace, size)
	var out []run
	var buf sfnt.Buffer
	for _, r := range line {
		face := main
		if !drawable(main.Face, &buf, r) {
			face = fb
		}
		if n := len(out); n > 0 && (out[n-1].face.Font == face.Font || unicode.IsSpace(r)) {
			out[n-1].text += string(r)
			continue
		}
		out = append(out, run{face, string(r)})
	}
	return out
}

func (h handler) width(line string, size vg.Length) vg.Length {
	w := vg.Length(0)
	for _, r := range h.runs(line, size) {
		w += r.face.Width(r.text)
	}
	return w
}

func (h handler) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	e := h.Extents(fnt)
	return h.width(txt, fnt.Size), e.Ascent, e.Descent
}

// Draw draws txt so that it fills sty.Rectangle(txt) translated to pt: the first baseline one
// ascent below the rectangle's top, the next lines one font height apart.
func (h handler) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	txt = strings.TrimRight(txt, "\n")
	if txt == "" {
		return
	}
	c.SetColor(sty.Color)
	if sty.Rotation != 0 {
		c.Push()
		c.Rotate(sty.Rotation)
		sin, cos := math.Sincos(sty.Rotation)
		pt.X, pt.Y = pt.Y*vg.Length(sin)+pt.X*vg.Length(cos), pt.Y*vg.Length(cos)-pt.X*vg.Length(sin)
	}
	e := h.Extents(sty.Font)
	hgt := sty.Height(txt)
	top := pt.Y + vg.Length(sty.YAlign)*hgt - (e.Height - e.Ascent) + hgt
	for i, line := range h.Lines(txt) {
		y := top - e.Ascent - vg.Length(i)*e.Height
		x := pt.X + vg.Length(sty.XAlign)*h.width(line, sty.Font.Size)
		for _, r := range h.runs(line, sty.Font.Size) {
			c.FillString(r.face, vg.Point{X: x, Y: y}, r.text)
			x += r.face.Width(r.text)
		}
	}
	if sty.Rotation != 0 {
		c.Pop()
	}
}

// wrap breaks s into lines no wider than maxW when drawn at size: at spaces and after '-', '_',
// '/', '.', ',', between CJK characters, and inside a word only when the word alone is too wide.
func (h handler) wrap(s string, size, maxW vg.Length) string {
	if maxW <= 0 || h.width(s, size) <= maxW {
		return s
	}
	var lines []string
	line := ""
	for _, word := range breakable(s) {
		try := line + word
		if line == "" || h.width(strings.TrimRight(try, " "), size) <= maxW {
			line = try
			continue
		}
		lines = append(lines, strings.TrimRight(line, " "))
		line = strings.TrimLeft(word, " ")
	}
	lines = append(lines, strings.TrimRight(line, " "))
	// A piece still too wide is cut where it must be.
	var out []string
	for _, l := range lines {
		for h.width(l, size) > maxW && len([]rune(l)) > 1 {
			rs := []rune(l)
			n := len(rs) - 1
			for n > 1 && h.width(string(rs[:n]), size) > maxW {
				n--
			}
			out = append(out, string(rs[:n]))
			l = string(rs[n:])
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// breakable cuts s into pieces after which a line may end.
func breakable(s string) []string {
	var out []string
	cur := ""
	rs := []rune(s)
	for i, r := range rs {
		cur += string(r)
		next := rune(0)
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		switch {
		case r == ' ' && next != ' ':
		case strings.ContainsRune("-_/.,", r) && next != ' ' && next != 0:
		case wide(r) || wide(next):
		default:
			continue
		}
		out = append(out, cur)
		cur = ""
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// wide reports a CJK character, between which lines may break.
func wide(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) || (r >= 0x3000 && r <= 0x303f) || (r >= 0xff00 && r <= 0xffef)
}
