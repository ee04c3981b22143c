package ui

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jikken-dev/jikken/store"
)

// pageData is what every page template gets; each page fills its part.
type pageData struct {
	Title    string
	Error    string
	Code     int
	Runs     *RunsPage
	Run      *RunView
	Trial    *TrialPage
	Stats    *StatsView
	Selected []string
	Delete   *DeleteView
	// CanDelete shows the delete buttons (the server was started with --allow-delete).
	CanDelete bool
	Deleted   string
	Poll      int // milliseconds between polls of a live page
	Store     string
}

var funcs = template.FuncMap{
	"seg":  urlSeg,
	"time": fmtTime,
	"num":  fmtMetric,
	"bytes": func(n int64) string {
		switch {
		case n < 1<<10:
			return strconv.FormatInt(n, 10) + " B"
		case n < 1<<20:
			return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
		case n < 1<<30:
			return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
		}
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	},
	"short": func(s string, n int) string {
		if len(s) <= n {
			return s
		}
		return s[:n]
	},
	"counts": countsLine,
	"since": func(s RunSummary) string {
		if s.Started == nil {
			return ""
		}
		end := time.Now()
		if s.Finished != nil {
			end = *s.Finished
		}
		return fmtDuration(end.Sub(*s.Started))
	},
	"values": func(v *RunView, param string) []string {
		var out []string
		for _, t := range v.Trials {
			if x, ok := t.Params[param]; ok && !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
		slices.SortFunc(out, compareValues)
		return out
	},
	"metric": func(t TrialView, name string) string {
		v, ok := t.Metrics[name]
		if !ok {
			return ""
		}
		return fmtMetric(v)
	},
	"median": func(s RunSummary, name string) string {
		v, ok := s.Medians[name]
		if !ok {
			return ""
		}
		return fmtMetric(v)
	},
	"exit": func(p *int) string {
		if p == nil {
			return ""
		}
		return strconv.Itoa(*p)
	},
	"seed": func(p *int64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatInt(*p, 10)
	},
	"has": func(list []string, s string) bool { return slices.Contains(list, s) },
	"page": func(p *RunsPage, n int) string {
		v := url.Values{}
		if p.Query != "" {
			v.Set("q", p.Query)
		}
		if p.Status != "" {
			v.Set("status", string(p.Status))
		}
		if len(p.Where) > 0 {
			v.Set("where", strings.Join(p.Where, ", "))
		}
		v.Set("page", strconv.Itoa(n))
		return "/?" + v.Encode()
	},
	"add":  func(a, b int) int { return a + b },
	"join": strings.Join,
	"runsAPI": func(p *RunsPage) string {
		v := url.Values{"page": {strconv.Itoa(p.Page)}}
		if p.Query != "" {
			v.Set("q", p.Query)
		}
		if p.Status != "" {
			v.Set("status", string(p.Status))
		}
		if len(p.Where) > 0 {
			v.Set("where", strings.Join(p.Where, ", "))
		}
		return "/api/runs?" + v.Encode()
	},
	"statsURL": func(run string) string { return "/runs/" + urlSeg(run) + "/stats" },
	"compareURL": func(ids []string) string {
		v := url.Values{"run": ids}
		return "/compare?" + v.Encode()
	},
	"json": func(v any) (string, error) {
		b, err := jsonMarshal(v)
		return string(b), err
	},
	"statuses": func() []store.Status {
		return []store.Status{store.Pending, store.Running, store.Succeeded, store.Pruned, store.Eliminated, store.Failed, store.Skipped, store.Killed, store.Stopped}
	},
}

// compareValues sorts numbers as numbers and the rest as text.
func compareValues(a, b string) int {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	if errA == nil && errB == nil {
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	return strings.Compare(a, b)
}

func fmtTime(t any) string {
	var tt time.Time
	switch x := t.(type) {
	case time.Time:
		tt = x
	case *time.Time:
		if x == nil {
			return ""
		}
		tt = *x
	}
	if tt.IsZero() {
		return ""
	}
	return tt.UTC().Format("2006-01-02 15:04:05")
}

// fmtMetric shows a metric with enough digits to tell values apart in a table.
func fmtMetric(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

func countsLine(s RunSummary) string {
	var parts []string
	for _, st := range []store.Status{store.Succeeded, store.Pruned, store.Eliminated, store.Failed, store.Running, store.Pending, store.Skipped, store.Killed, store.Stopped} {
		if n := s.Counts[st]; n > 0 {
			parts = append(parts, strconv.Itoa(n)+" "+string(st))
		}
	}
	return strings.Join(parts, " · ")
}

func parseTemplates() (map[string]*template.Template, error) {
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "assets/templates/layout.html", "assets/templates/*.tmpl")
	if err != nil {
		return nil, fmt.Errorf("ui templates: %w", err)
	}
	pages, err := fs.Glob(assets, "assets/templates/*.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	for _, p := range pages {
		name := strings.TrimSuffix(p[strings.LastIndex(p, "/")+1:], ".html")
		if name == "layout" {
			continue
		}
		t, err := template.Must(base.Clone()).ParseFS(assets, p)
		if err != nil {
			return nil, fmt.Errorf("ui template %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// render writes a page; it is rendered into a buffer first so that a template error becomes a
// 500, not half a page.
func (s *Server) render(w http.ResponseWriter, req *http.Request, name string, d *pageData) {
	d.Poll = int(s.opts.PollInterval / time.Millisecond)
	d.CanDelete = s.opts.AllowDelete
	d.Store = s.r.runs.Blob.Location()
	var buf bytes.Buffer
	if err := s.tmpl[name].ExecuteTemplate(&buf, "layout.html", d); err != nil {
		s.opts.Log.Error("ui render", "page", name, "err", err)
		http.Error(w, "render "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if d.Code != 0 {
		w.WriteHeader(d.Code)
	}
	_, _ = w.Write(buf.Bytes())
}
