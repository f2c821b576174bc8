// Command quotad answers "may tenant X make a call?" over HTTP for the API gateway.
package main

import (
	"errors"
	"flag"
	"log"
	"net/http"

	"example.com/quotad/quota"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9090", "listen address")
	daily := flag.Int("daily", 10000, "default calls per tenant per day")
	flag.Parse()

	tracker := quota.NewTracker(*daily, map[string]int{"internal": 1 << 30})
	http.HandleFunc("/allow", func(w http.ResponseWriter, r *http.Request) {
		err := tracker.Allow(r.URL.Query().Get("tenant"))
		var exceeded quota.ErrExceeded
		switch {
		case errors.As(err, &exceeded):
			http.Error(w, err.Error(), http.StatusTooManyRequests)
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	log.Fatal(http.ListenAndServe(*addr, nil))
}
