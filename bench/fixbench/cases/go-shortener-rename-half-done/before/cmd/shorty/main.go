// Command shorty runs the URL shortener.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"

	"example.com/shorty/internal/httpapi"
	"example.com/shorty/internal/store"
)

func main() {
	addr := flag.String("addr", ":8080", "listen address")
	seed := flag.String("seed", "", "file of URLs to add at start, one per line")
	flag.Parse()

	s := store.New()
	if *seed != "" {
		if err := seedFrom(s, *seed); err != nil {
			log.Fatal(err)
		}
	}
	log.Printf("listening on %s", *addr)
	log.Fatal(http.ListenAndServe(*addr, httpapi.Handler{Store: s}))
}

// seedFrom adds every URL in path and checks that it resolves back.
func seedFrom(s *store.Store, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" {
			continue
		}
		code := s.Add(line)
		if got, ok := s.Lookup(code); !ok || got != line {
			return fmt.Errorf("seed %q: stored as %q", line, got)
		}
		log.Printf("seeded /%s -> %s", code, line)
	}
	return scanner.Err()
}
