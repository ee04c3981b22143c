package ui

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/jikken-dev/jikken/store"
)

// errConflict marks a request refused because of the run's state (a live runner).
var errConflict = errors.New("conflict")

// errForbidden marks a request that did not come from this server's own page.
var errForbidden = errors.New("forbidden")

// DeleteView is the page that asks to confirm a run's deletion.
type DeleteView struct {
	Run     RunSummary
	Objects int
	CSRF    string
	Busy    string // why the run cannot be deleted now, or ""
}

func newCSRF() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// busy says why a run's runner may still work on it, as 'jikken rm' does: a live process here,
// or a lock held on another machine, which cannot be checked from here.
func (r *reader) busy(req *http.Request, id string) (string, error) {
	holder, err := r.runs.LockHolder(req.Context(), id)
	switch {
	case err != nil:
		return "", err
	case holder == nil:
		return "", nil
	case store.HolderAlive(holder, r.host):
		return fmt.Sprintf("is still running (runner pid %d); stop it with 'jikken kill %s' first", holder.PID, id), nil
	case holder.Host != r.host:
		return fmt.Sprintf("is locked by runner pid %d on %s; stop it with 'jikken kill %s' first", holder.PID, holder.Host, id), nil
	}
	return "", nil
}

func (s *Server) deletePage(w http.ResponseWriter, req *http.Request) {
	id := req.PathValue("run")
	if err := segment("run", id); err != nil {
		s.fail(w, req, err)
		return
	}
	if _, err := s.r.manifest(req.Context(), id); err != nil {
		s.fail(w, req, err)
		return
	}
	v := &DeleteView{Run: s.r.summary(req.Context(), id), CSRF: s.csrf}
	_ = s.r.runs.Blob.List(req.Context(), "runs/"+id+"/", func(store.Info) error {
		v.Objects++
		return nil
	})
	busy, err := s.r.busy(req, id)
	if err != nil {
		s.fail(w, req, err)
		return
	}
	v.Busy = busy
	s.render(w, req, "delete", &pageData{Title: "Delete " + id, Delete: v})
}

// deleteRun deletes a run when the form came from this server's confirmation page (its token,
// and the same origin when the browser says), the run id was typed again, and no runner holds
// the run.
func (s *Server) deleteRun(w http.ResponseWriter, req *http.Request) {
	id := req.PathValue("run")
	if err := segment("run", id); err != nil {
		s.fail(w, req, err)
		return
	}
	if origin := req.Header.Get("Origin"); origin != "" && origin != "http://"+req.Host {
		s.fail(w, req, fmt.Errorf("a delete from %s, another site: %w", origin, errForbidden))
		return
	}
	if site := req.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		s.fail(w, req, fmt.Errorf("a delete from another site (%s): %w", site, errForbidden))
		return
	}
	req.Body = http.MaxBytesReader(w, req.Body, 1<<16)
	if err := req.ParseForm(); err != nil {
		s.fail(w, req, fmt.Errorf("read the form: %v: %w", err, errBadRequest))
		return
	}
	if subtle.ConstantTimeCompare([]byte(req.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
		s.fail(w, req, fmt.Errorf("the form did not come from this server's page; open the run's delete page again: %w", errForbidden))
		return
	}
	if req.PostForm.Get("confirm") != id {
		s.fail(w, req, fmt.Errorf("type the run id %s to confirm: %w", id, errBadRequest))
		return
	}
	if _, err := s.r.manifest(req.Context(), id); err != nil {
		s.fail(w, req, err)
		return
	}
	busy, err := s.r.busy(req, id)
	if err != nil {
		s.fail(w, req, err)
		return
	}
	if busy != "" {
		s.fail(w, req, fmt.Errorf("run %s %s: %w", id, busy, errConflict))
		return
	}
	n, err := s.r.runs.Delete(req.Context(), id, nil)
	if err != nil {
		s.fail(w, req, err)
		return
	}
	s.r.forget(id)
	s.opts.Log.Info("ui: deleted run", "run", id, "objects", n)
	http.Redirect(w, req, "/?deleted="+url.QueryEscape(id), http.StatusSeeOther)
}

// forget drops what is cached of a deleted run.
func (r *reader) forget(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.manifests, id)
	for i, m := range r.recent {
		if m.RunID == id {
			r.recent = append(r.recent[:i:i], r.recent[i+1:]...)
			break
		}
	}
	for k := range r.metrics {
		if len(k) > len(id) && k[:len(id)+1] == id+"/" {
			delete(r.metrics, k)
		}
	}
}
