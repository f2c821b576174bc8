// Command mirror copies a directory's files to another directory, retrying flaky reads.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"example.com/mirror/mirror"
	"example.com/mirror/retry"
)

type dirStore string

func (d dirStore) Get(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(string(d), name))
}
func (d dirStore) Put(name string, data []byte) error {
	return os.WriteFile(filepath.Join(string(d), name), data, 0o644)
}

func main() {
	from := flag.String("from", "", "source directory")
	to := flag.String("to", "", "destination directory")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	var entries []os.DirEntry
	err := retry.Do(ctx, 3, time.Second, func() error {
		var err error
		entries, err = os.ReadDir(*from)
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	if err := mirror.Copy(ctx, dirStore(*from), dirStore(*to), names); err != nil {
		log.Fatal(err)
	}
	log.Printf("mirrored %d files", len(names))
}
