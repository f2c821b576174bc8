package retry

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestRetriesUntilSuccess(t *testing.T) {
	calls := 0
	err := Do(context.Background(), 5, time.Millisecond, func() error {
		calls++
		if calls < 3 {
			return errors.New("503")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("err=%v calls=%d", err, calls)
	}
}

func TestPermanentErrorsStopAtOnce(t *testing.T) {
	calls := 0
	notFound := errors.New("404")
	err := Do(context.Background(), 5, time.Millisecond, func() error {
		calls++
		return Permanent{notFound}
	})
	if !errors.Is(err, notFound) || calls != 1 {
		t.Fatalf("err=%v calls=%d", err, calls)
	}
}
