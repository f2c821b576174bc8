package httpapi

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"example.com/shorty/internal/store"
)

func TestCreateThenRedirect(t *testing.T) {
	h := Handler{Store: store.New()}
	form := url.Values{"url": {"https://example.org/a"}}
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: status %d: %s", rec.Code, rec.Body)
	}
	path := strings.TrimSpace(rec.Body.String())

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusFound || rec.Header().Get("Location") != "https://example.org/a" {
		t.Fatalf("redirect: status %d, location %q", rec.Code, rec.Header().Get("Location"))
	}
}

func TestRejectsNonHTTPTargets(t *testing.T) {
	h := Handler{Store: store.New()}
	form := url.Values{"url": {"javascript:alert(1)"}}
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", rec.Code)
	}
}
