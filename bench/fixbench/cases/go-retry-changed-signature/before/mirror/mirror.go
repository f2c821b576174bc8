// Package mirror copies files from a source to a destination store.
package mirror

import (
	"context"
	"fmt"
	"time"

	"example.com/mirror/retry"
)

// Store is a place files can be read from and written to.
type Store interface {
	Get(name string) ([]byte, error)
	Put(name string, data []byte) error
}

// Copy mirrors names from src to dst, retrying each transfer.
func Copy(ctx context.Context, src, dst Store, names []string) error {
	for _, name := range names {
		var data []byte
		err := retry.Do(ctx, 4, 50*time.Millisecond, func() error {
			var err error
			data, err = src.Get(name)
			return err
		})
		if err != nil {
			return fmt.Errorf("get %s: %w", name, err)
		}
		if err := retry.Do(ctx, 4, 50*time.Millisecond, func() error { return dst.Put(name, data) }); err != nil {
			return fmt.Errorf("put %s: %w", name, err)
		}
	}
	return nil
}
