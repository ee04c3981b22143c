package ui

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/store"
)

func post(t *testing.T, h http.Handler, path string, form url.Values, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	req.Host = "127.0.0.1:8080"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func TestDeleteOnlyWhenAllowedAndConfirmed(t *testing.T) {
	runs, id := fixture(t)
	ro, err := New(runs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w := post(t, ro, "/runs/"+id+"/delete", url.Values{"confirm": {id}}, nil); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("a read-only server: %d", w.Code)
	}
	if body := get(t, ro, "GET", "/runs/"+id).Body.String(); strings.Contains(body, "/delete") {
		t.Error("a read-only server offers to delete")
	}

	s, err := New(runs, Options{AllowDelete: true, Host: "here"})
	if err != nil {
		t.Fatal(err)
	}
	page := get(t, s, "GET", "/runs/"+id+"/delete").Body.String()
	if !strings.Contains(page, "locked by runner pid 42 on elsewhere") || strings.Contains(page, `name="confirm"`) {
		t.Errorf("a run locked elsewhere: the page should refuse:\n%s", page)
	}
	csrf := s.csrf
	if w := post(t, s, "/runs/"+id+"/delete", url.Values{"confirm": {id}, "csrf": {csrf}}, nil); w.Code != http.StatusConflict {
		t.Errorf("a run locked elsewhere: %d; want 409", w.Code)
	}
	if err := runs.Blob.Delete(context.Background(), store.RunKey(id, "lock")); err != nil {
		t.Fatal(err)
	}
	page = get(t, s, "GET", "/runs/"+id+"/delete").Body.String()
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if m == nil || m[1] != csrf {
		t.Fatalf("the confirmation page carries no token:\n%s", page)
	}
	// A wrong token differs from the right one in its first digit (a fixed "0" would be the right
	// token one time in sixteen).
	wrong := "1" + csrf[1:]
	if csrf[0] == '1' {
		wrong = "2" + csrf[1:]
	}
	for _, c := range []struct {
		form   url.Values
		header map[string]string
		code   int
	}{
		{url.Values{"confirm": {id}}, nil, http.StatusForbidden},                     // no token: another site's form
		{url.Values{"confirm": {id}, "csrf": {wrong}}, nil, http.StatusForbidden},    // a wrong one
		{url.Values{"confirm": {"yes"}, "csrf": {csrf}}, nil, http.StatusBadRequest}, // not the id
		{url.Values{"confirm": {id}, "csrf": {csrf}}, map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{url.Values{"confirm": {id}, "csrf": {csrf}}, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
	} {
		if w := post(t, s, "/runs/"+id+"/delete", c.form, c.header); w.Code != c.code {
			t.Errorf("%v %v: %d; want %d", c.form, c.header, w.Code, c.code)
		}
	}
	if _, err := runs.Manifest(context.Background(), id); err != nil {
		t.Fatalf("a refused delete deleted: %v", err)
	}
	w := post(t, s, "/runs/"+id+"/delete", url.Values{"confirm": {id}, "csrf": {csrf}},
		map[string]string{"Origin": "http://127.0.0.1:8080", "Sec-Fetch-Site": "same-origin"})
	if w.Code != http.StatusSeeOther {
		t.Fatalf("delete: %d %s", w.Code, w.Body)
	}
	if _, err := runs.Manifest(context.Background(), id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after delete the manifest: %v", err)
	}
	if w := get(t, s, "GET", "/runs/"+id); w.Code != http.StatusNotFound {
		t.Errorf("the deleted run's page: %d (a cached manifest?)", w.Code)
	}
}
