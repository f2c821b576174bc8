// Command statusboard shows which services answer their health check.
package main

import (
	"flag"
	"log"
	"net/http"
	"strings"
	"sync"
	"time"

	"example.com/statusboard/web"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "listen address")
	targets := flag.String("targets", "api=http://127.0.0.1:8080/healthz", "name=url,... to check")
	flag.Parse()

	var mu sync.Mutex
	var services []web.Service
	go func() {
		client := &http.Client{Timeout: 3 * time.Second}
		for {
			var next []web.Service
			for _, pair := range strings.Split(*targets, ",") {
				name, url, _ := strings.Cut(pair, "=")
				resp, err := client.Get(url)
				up := err == nil && resp.StatusCode == http.StatusOK
				if err == nil {
					resp.Body.Close()
				}
				next = append(next, web.Service{Name: name, Up: up})
			}
			mu.Lock()
			services = next
			mu.Unlock()
			time.Sleep(15 * time.Second)
		}
	}()
	status := func() []web.Service {
		mu.Lock()
		defer mu.Unlock()
		return services
	}
	log.Fatal(http.ListenAndServe(*addr, web.Handler(status)))
}
