// Package httpapi serves the shortener over HTTP.
package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"example.com/shorty/internal/store"
)

// Handler creates codes on POST / and redirects on GET /<code>.
type Handler struct {
	Store *store.Store
}

func (h Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		h.create(w, r)
	case http.MethodGet:
		h.redirect(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (h Handler) create(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	target := r.PostForm.Get("url")
	if u, err := url.Parse(target); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		http.Error(w, "url must be http or https", http.StatusBadRequest)
		return
	}
	code := h.Store.Add(target)
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, "/%s\n", code)
}

func (h Handler) redirect(w http.ResponseWriter, r *http.Request) {
	code := strings.TrimPrefix(r.URL.Path, "/")
	target, ok := h.Store.Lookup(code)
	if !ok {
		http.NotFound(w, r)
		return
	}
	http.Redirect(w, r, target, http.StatusFound)
}
