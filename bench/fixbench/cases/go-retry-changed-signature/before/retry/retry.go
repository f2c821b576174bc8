// Package retry runs an operation again after transient failures.
package retry

import (
	"context"
	"errors"
	"time"
)

// Permanent marks an error that must not be retried.
type Permanent struct{ Err error }

func (p Permanent) Error() string { return p.Err.Error() }
func (p Permanent) Unwrap() error { return p.Err }

// Do calls op until it succeeds, returns a Permanent error, ctx ends, or attempts are used up.
// The wait doubles after each failure, starting at base.
func Do(ctx context.Context, attempts int, base time.Duration, op func() error) error {
	var err error
	wait := base
	for i := 0; i < attempts; i++ {
		if err = op(); err == nil {
			return nil
		}
		var permanent Permanent
		if errors.As(err, &permanent) {
			return permanent.Err
		}
		if i == attempts-1 {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
	return err
}
