// Package web serves the status board: the HTML page and its static assets.
package web

import (
	"embed"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed assets
var embedded embed.FS

// Assets is what /static/ serves; tests swap it.
var Assets fs.FS = mustSub(embedded, "assets")

func mustSub(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err)
	}
	return sub
}

// Service is one line on the board.
type Service struct {
	Name string
	Up   bool
}

var page = template.Must(template.New("page").Parse(`<!doctype html>
<link rel="stylesheet" href="/static/style.css">
<ul>{{range .}}<li class="{{if .Up}}up{{else}}down{{end}}">{{.Name}}</li>{{end}}</ul>
<script src="/static/app.js"></script>
`))

// Handler serves the board for the services that status returns.
func Handler(status func() []Service) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := page.Execute(w, status()); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	mux.HandleFunc("/static/", serveAsset)
	return mux
}

func serveAsset(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/static/")
	data, err := fs.ReadFile(Assets, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	contentType := mime.TypeByExtension(path.Ext(name))
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write(data)
}
