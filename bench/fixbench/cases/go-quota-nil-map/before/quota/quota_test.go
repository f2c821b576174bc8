package quota

import (
	"errors"
	"testing"
	"time"
)

func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

func TestLimitPerTenant(t *testing.T) {
	tr := NewTracker(2, map[string]int{"big": 3})
	tr.Now = fixedClock(time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC))
	for i := 0; i < 3; i++ {
		if err := tr.Allow("big"); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	var exceeded ErrExceeded
	if err := tr.Allow("big"); !errors.As(err, &exceeded) || exceeded.Limit != 3 {
		t.Fatalf("4th call: %v", err)
	}
	_ = tr.Allow("small")
	_ = tr.Allow("small")
	if err := tr.Allow("small"); err == nil {
		t.Fatal("default limit not applied")
	}
}

func TestCountsResetAtMidnightUTC(t *testing.T) {
	tr := NewTracker(1, nil)
	tr.Now = fixedClock(time.Date(2024, 3, 1, 23, 59, 0, 0, time.UTC))
	if err := tr.Allow("acme"); err != nil {
		t.Fatal(err)
	}
	tr.Now = fixedClock(time.Date(2024, 3, 2, 0, 1, 0, 0, time.UTC))
	if got := tr.Used("acme"); got != 0 {
		t.Errorf("Used after midnight = %d, want 0", got)
	}
	if err := tr.Allow("acme"); err != nil {
		t.Errorf("first call of the new day: %v", err)
	}
}
