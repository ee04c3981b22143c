// Package ui serves a store's runs as web pages: the runs, a run's trials (live while it runs),
// a trial's logs and files, and the statistics of the analysis commands. It only reads the
// store. Everything a trial printed or named is untrusted: pages are html/template output with
// no inline script, stored files are served as downloads in a sandbox (artifact previews as
// sandboxed images and frames), and names from URLs are checked against the run's plan before
// they reach the store.
package ui

import (
	"bytes"
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jikken-dev/jikken/store"
)

//go:embed assets
var assets embed.FS

// Options configure a Server.
type Options struct {
	// Token, when set, must come with every request (?token=, then a cookie, or an
	// Authorization: Bearer header). Required when the server listens beyond this machine.
	Token string
	// LoopbackOnly refuses requests whose Host header is not a loopback name: a page on another
	// site cannot then reach the server through a DNS name rebound to 127.0.0.1.
	LoopbackOnly bool
	// Host is this machine's name: logs of attempts running here are read from their folder.
	Host string
	// PollInterval is how often pages of live runs ask for news; zero means 2 s.
	PollInterval time.Duration
	// Log receives a line per failed request; nil means slog's default.
	Log *slog.Logger
	// AllowDelete offers to delete runs, each after a confirmation (typing its id); without it
	// the server only reads.
	AllowDelete bool
}

// Server serves one store's runs.
type Server struct {
	r    *reader
	opts Options
	mux  *http.ServeMux
	tmpl map[string]*template.Template
	// csrf is the token a delete form must carry: a page of another site cannot read it.
	csrf string
}

// New returns a server of the runs in runs.
func New(runs store.Runs, opts Options) (*Server, error) {
	if opts.PollInterval == 0 {
		opts.PollInterval = 2 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	s := &Server{r: newReader(runs, opts.Host), opts: opts, mux: http.NewServeMux()}
	var err error
	if s.tmpl, err = parseTemplates(); err != nil {
		return nil, err
	}
	static, _ := fs.Sub(assets, "assets/static")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	runsPage, runsJSON := pageAndJSON(s, s.loadRuns, "runs", func(req *http.Request, p *RunsPage) *pageData {
		return &pageData{Title: "Runs", Runs: p, Deleted: req.URL.Query().Get("deleted")}
	})
	runPage, runJSON := pageAndJSON(s, s.loadRun, "run", func(_ *http.Request, v *RunView) *pageData {
		return &pageData{Title: v.ID, Run: v}
	})
	trialPage, trialJSON := pageAndJSON(s, s.loadTrial, "trial", func(_ *http.Request, p *TrialPage) *pageData {
		return &pageData{Title: p.View.Name + " · " + p.Run, Trial: p}
	})
	s.mux.HandleFunc("GET /{$}", runsPage)
	s.mux.HandleFunc("GET /api/runs", runsJSON)
	s.mux.HandleFunc("GET /runs/{run}", runPage)
	s.mux.HandleFunc("GET /api/runs/{run}", runJSON)
	s.mux.HandleFunc("GET /runs/{run}/trials/{trial}", trialPage)
	s.mux.HandleFunc("GET /api/runs/{run}/trials/{trial}", trialJSON)
	s.mux.HandleFunc("GET /api/runs/{run}/trials/{trial}/live", s.livePoints)
	s.mux.HandleFunc("GET /api/runs/{run}/live", s.runLive)
	s.mux.HandleFunc("GET /runs/{run}/trials/{trial}/log/{stream}", s.logText)
	s.mux.HandleFunc("GET /runs/{run}/trials/{trial}/files/{file...}", s.file)
	s.mux.HandleFunc("GET /runs/{run}/stats", s.statsPage)
	s.mux.HandleFunc("GET /api/runs/{run}/stats", s.statsJSON)
	s.mux.HandleFunc("GET /api/runs/{run}/explore", s.explore)
	s.mux.HandleFunc("GET /compare", s.comparePage)
	s.mux.HandleFunc("GET /api/compare", s.compareJSON)
	if opts.AllowDelete {
		s.csrf = newCSRF()
		s.mux.HandleFunc("GET /runs/{run}/delete", s.deletePage)
		s.mux.HandleFunc("POST /runs/{run}/delete", s.deleteRun)
	}
	return s, nil
}

// ServeHTTP checks the request's method, host and token, then routes it.
func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: under no-referrer a browser sends "Origin: null" with its own
	// forms, which the delete form's origin check would refuse.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	if req.Method != http.MethodGet && req.Method != http.MethodHead && !(s.opts.AllowDelete && req.Method == http.MethodPost) {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "this server only reads the store (start it with --allow-delete to delete runs)", http.StatusMethodNotAllowed)
		return
	}
	if s.opts.LoopbackOnly && !loopbackHost(req.Host) {
		http.Error(w, "this server answers only to localhost, 127.0.0.1 or [::1]", http.StatusForbidden)
		return
	}
	if s.opts.Token != "" && !s.authorized(w, req) {
		return
	}
	s.mux.ServeHTTP(w, req)
}

const tokenCookie = "jikken_ui_token"

// authorized checks the token; a valid ?token= becomes a cookie and is taken out of the URL.
func (s *Server) authorized(w http.ResponseWriter, req *http.Request) bool {
	same := func(t string) bool { return subtle.ConstantTimeCompare([]byte(t), []byte(s.opts.Token)) == 1 }
	if t := req.URL.Query().Get("token"); t != "" && same(t) {
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		u := *req.URL
		q := u.Query()
		q.Del("token")
		u.RawQuery = q.Encode()
		http.Redirect(w, req, u.RequestURI(), http.StatusSeeOther)
		return false
	}
	if c, err := req.Cookie(tokenCookie); err == nil && same(c.Value) {
		return true
	}
	if a, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok && same(a) {
		return true
	}
	http.Error(w, "a token is required: open the URL 'jikken ui' printed, with its ?token=", http.StatusUnauthorized)
	return false
}

func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// segment checks a run or trial name taken from a URL: one valid key segment.
func segment(what, v string) error {
	if strings.Contains(v, "/") || store.ValidKey(v) != nil {
		return fmt.Errorf("%s %q is not a valid name: %w", what, v, errBadRequest)
	}
	return nil
}

var errBadRequest = errors.New("bad request")

// fail answers an error with a page (or JSON for the API) and the fitting status.
func (s *Server) fail(w http.ResponseWriter, req *http.Request, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, store.ErrNotFound):
		code = http.StatusNotFound
	case errors.Is(err, errBadRequest):
		code = http.StatusBadRequest
	case errors.Is(err, errForbidden):
		code = http.StatusForbidden
	case errors.Is(err, errConflict):
		code = http.StatusConflict
	case errors.Is(err, context.Canceled):
		return
	}
	if code == http.StatusInternalServerError {
		s.opts.Log.Error("ui", "path", req.URL.Path, "err", err)
	}
	if strings.HasPrefix(req.URL.Path, "/api/") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
		return
	}
	s.render(w, req, "error", &pageData{Title: http.StatusText(code), Error: err.Error(), Code: code})
}

// writeJSON answers v as JSON, encoded whole before the first byte goes out: a value JSON
// cannot hold is then a 500 that says so (and is logged), not a 200 with an empty body.
func (s *Server) writeJSON(w http.ResponseWriter, req *http.Request, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		s.fail(w, req, fmt.Errorf("encode the answer: %w", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b.Bytes())
}

// pageAndJSON serves what load finds as an HTML page (view names the template and fills its
// data) and as JSON under /api, so the two can never disagree.
func pageAndJSON[T any](s *Server, load func(*http.Request) (T, error), view string, data func(*http.Request, T) *pageData) (page, api http.HandlerFunc) {
	page = func(w http.ResponseWriter, req *http.Request) {
		v, err := load(req)
		if err != nil {
			s.fail(w, req, err)
			return
		}
		s.render(w, req, view, data(req, v))
	}
	api = func(w http.ResponseWriter, req *http.Request) {
		v, err := load(req)
		if err != nil {
			s.fail(w, req, err)
			return
		}
		s.writeJSON(w, req, v)
	}
	return page, api
}

func (s *Server) loadRuns(req *http.Request) (*RunsPage, error) {
	q := req.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	return s.r.runsPage(req.Context(), q.Get("q"), store.Status(q.Get("status")), splitWhere(q["where"]), page)
}

// splitWhere reads the runs list's conditions: each where value holds one or more, separated by
// commas (the list's columns are metrics, whose values are numbers, so a comma is never part of
// one), so that one box of the page's form takes "loss<0.3, acc>=0.9".
func splitWhere(values []string) []string {
	var out []string
	for _, v := range values {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.TrimSpace(c); c != "" {
				out = append(out, c)
			}
		}
	}
	return out
}

func (s *Server) loadRun(req *http.Request) (*RunView, error) {
	id := req.PathValue("run")
	if err := segment("run", id); err != nil {
		return nil, err
	}
	return s.r.run(req.Context(), id)
}

func (s *Server) loadTrial(req *http.Request) (*TrialPage, error) {
	run, trial := req.PathValue("run"), req.PathValue("trial")
	if err := segment("run", run); err != nil {
		return nil, err
	}
	if err := segment("trial", trial); err != nil {
		return nil, err
	}
	return s.r.trial(req.Context(), run, trial, s.liveLog)
}

// liveLog opens the log of an attempt running on this machine, where it grows until the runner
// stores it; attempts running elsewhere show what the store has.
func (s *Server) liveLog(rec *store.TrialRecord, stream string) (io.ReadSeekCloser, error) {
	if rec.Live == nil || rec.Live.Dir == "" || rec.Live.Host != s.opts.Host || s.opts.Host == "" {
		return nil, store.ErrNotFound
	}
	return os.Open(filepath.Join(rec.Live.Dir, stream+".log"))
}

// logText answers the log of an attempt as plain text from byte ?offset= on, so a page can
// follow it; X-Log-Size gives the length so far and X-Log-Live says whether it still grows.
func (s *Server) logText(w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	run, trial, stream := req.PathValue("run"), req.PathValue("trial"), req.PathValue("stream")
	if stream != "stdout" && stream != "stderr" {
		s.fail(w, req, fmt.Errorf("log %q: want stdout or stderr: %w", stream, errBadRequest))
		return
	}
	if err := segment("run", run); err != nil {
		s.fail(w, req, err)
		return
	}
	if err := segment("trial", trial); err != nil {
		s.fail(w, req, err)
		return
	}
	if ok, _, _, err := s.r.plannedTrial(ctx, run, trial); err != nil || !ok {
		s.fail(w, req, cmpErr(err, fmt.Errorf("run %s has no trial %q: %w", run, trial, store.ErrNotFound)))
		return
	}
	rec, err := s.r.runs.Trial(ctx, run, trial)
	if err != nil {
		s.fail(w, req, err)
		return
	}
	q := req.URL.Query()
	offset, _ := strconv.ParseInt(q.Get("offset"), 10, 64)
	offset = max(offset, 0)
	last := 0
	if k := len(rec.Attempts); k > 0 {
		last = rec.Attempts[k-1].N
	}
	n := last
	if a := q.Get("attempt"); a != "" {
		if n, err = strconv.Atoi(a); err != nil || n < 1 || n > last {
			s.fail(w, req, fmt.Errorf("attempt %q: the trial has attempts 1 to %d: %w", a, last, errBadRequest))
			return
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "sandbox")
	live := n == last && rec.Live != nil && rec.Live.Attempt == n
	h.Set("X-Log-Live", strconv.FormatBool(live))
	h.Set("X-Trial-Status", string(rec.Status))
	var rc io.ReadCloser
	var size int64
	if f, err := s.liveLog(rec, stream); live && err == nil {
		size, _ = f.Seek(0, io.SeekEnd)
		rc = f
	} else {
		if f != nil {
			f.Close()
		}
		key := logKey(run, trial, n, n == last, stream)
		if in, err := s.r.runs.Blob.Stat(ctx, key); err == nil {
			size = in.Size
			if rc, err = s.r.runs.Blob.Get(ctx, key); err != nil {
				s.fail(w, req, err)
				return
			}
		}
	}
	h.Set("X-Log-Size", strconv.FormatInt(size, 10))
	if rc == nil {
		return // no log yet: an empty answer the page can poll again
	}
	defer rc.Close()
	if offset > size {
		offset = 0 // a new attempt began: start over
		h.Set("X-Log-Restart", "true")
	}
	if sk, ok := rc.(io.Seeker); ok {
		if _, err := sk.Seek(offset, io.SeekStart); err != nil {
			return
		}
	} else if _, err := io.CopyN(io.Discard, rc, offset); err != nil {
		return
	}
	_, _ = io.CopyN(w, rc, size-offset)
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// file serves a stored file of a trial as a download, never as a page of this site: the
// sandbox policy keeps even an HTML artifact from running script here. With ?view=inline an
// SVG or HTML file is served for the trial page's preview, sandboxed as strictly.
func (s *Server) file(w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	run, trial, name := req.PathValue("run"), req.PathValue("trial"), req.PathValue("file")
	for _, c := range []struct{ what, v string }{{"run", run}, {"trial", trial}} {
		if err := segment(c.what, c.v); err != nil {
			s.fail(w, req, err)
			return
		}
	}
	if err := store.ValidKey(name); err != nil {
		s.fail(w, req, fmt.Errorf("file %q: %v: %w", name, err, errBadRequest))
		return
	}
	if ok, _, _, err := s.r.plannedTrial(ctx, run, trial); err != nil || !ok {
		s.fail(w, req, cmpErr(err, fmt.Errorf("run %s has no trial %q: %w", run, trial, store.ErrNotFound)))
		return
	}
	key := store.TrialKey(run, trial, name)
	in, err := s.r.runs.Blob.Stat(ctx, key)
	if err != nil {
		s.fail(w, req, err)
		return
	}
	rc, err := s.r.runs.Blob.Get(ctx, key)
	if err != nil {
		s.fail(w, req, err)
		return
	}
	defer rc.Close()
	h := w.Header()
	h.Set("Content-Security-Policy", "sandbox")
	h.Set("Content-Length", strconv.FormatInt(in.Size, 10))
	base := name[strings.LastIndex(name, "/")+1:]
	ext := strings.ToLower(filepath.Ext(base))
	inline := req.URL.Query().Get("view") == "inline"
	switch {
	case inline && (ext == ".svg" || ext == ".html" || ext == ".htm"):
		// A preview, shown in an <img> (SVG) or a sandboxed <iframe> (HTML) of the trial page:
		// the document gets a unique origin (sandbox without allow-same-origin), may run no
		// script (no allow-scripts) and load nothing but its own styles and inline images.
		// Only this site may frame it: X-Frame-Options, as frame-ancestors 'self' would be
		// read against the document's unique origin and refuse even the trial page.
		h.Set("Content-Type", map[bool]string{true: "image/svg+xml", false: "text/html; charset=utf-8"}[ext == ".svg"])
		h.Set("Content-Security-Policy", artifactPolicy)
		h.Set("X-Frame-Options", "SAMEORIGIN")
	default:
		fileType(h, base, ext)
	}
	if req.Method == http.MethodHead {
		return
	}
	_, _ = io.Copy(w, rc)
}

// artifactPolicy is the Content-Security-Policy of an SVG or HTML artifact shown inline.
const artifactPolicy = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:"

// fileType sets the type of a stored file served as is: text and raster images show in the
// browser, everything else (HTML, SVG, anything that could hold script) is a download.
func fileType(h http.Header, base, ext string) {
	switch ext {
	case ".log", ".txt", ".json", ".jsonl", ".csv", ".tsv", ".md", ".yaml", ".yml":
		h.Set("Content-Type", "text/plain; charset=utf-8")
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		h.Set("Content-Type", "image/"+strings.TrimPrefix(strings.Replace(ext, "jpg", "jpeg", 1), "."))
	default:
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", "attachment; filename*=UTF-8''"+url.PathEscape(base))
	}
}

// urlSeg escapes a name for one segment of a URL path.
func urlSeg(s string) string { return url.PathEscape(s) }

// urlPath escapes each segment of a slash-separated path.
func urlPath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
