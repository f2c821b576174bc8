package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

func board() []Service {
	return []Service{{Name: "api", Up: true}, {Name: "billing", Up: false}}
}

func get(t *testing.T, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	Handler(board).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

func TestPageListsServices(t *testing.T) {
	rec := get(t, "/")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `<li class="down">billing</li>`) {
		t.Fatalf("status %d, body %s", rec.Code, rec.Body)
	}
}

func TestStaticAssets(t *testing.T) {
	Assets = fstest.MapFS{
		"style.css": {Data: []byte("body{}")},
		"app.js":    {Data: []byte("void 0")},
	}
	cases := []struct {
		path, body string
		status     int
	}{
		{"/static/style.css", "body{}", http.StatusOK},
		{"/static/app.js", "void 0", http.StatusOK},
		{"/static/missing.png", "404 page not found\n", http.StatusNotFound},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			rec := get(t, c.path)
			if rec.Code != c.status || rec.Body.String() != c.body {
				t.Fatalf("got %d %q, want %d %q", rec.Code, rec.Body, c.status, c.body)
			}
		})
	}
}
