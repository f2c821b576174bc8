// Package quota counts API calls per tenant against a daily limit.
package quota

import (
	"fmt"
	"sync"
	"time"
)

// Tracker counts calls per tenant for the current UTC day.
type Tracker struct {
	mu     sync.Mutex
	limits map[string]int // tenant -> calls per day; tenants not listed get DefaultLimit
	used   map[string]int
	day    string

	DefaultLimit int
	Now          func() time.Time
}

// NewTracker returns a tracker with the given per-tenant limits.
func NewTracker(defaultLimit int, limits map[string]int) *Tracker {
	return &Tracker{
		limits:       limits,
		used:         map[string]int{},
		DefaultLimit: defaultLimit,
		Now:          time.Now,
	}
}

// ErrExceeded is returned when a tenant has used up its day.
type ErrExceeded struct {
	Tenant string
	Limit  int
}

func (e ErrExceeded) Error() string {
	return fmt.Sprintf("tenant %s exceeded its limit of %d calls today", e.Tenant, e.Limit)
}

// Allow records one call for tenant, or returns ErrExceeded.
func (t *Tracker) Allow(tenant string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rollOver()
	limit, ok := t.limits[tenant]
	if !ok {
		limit = t.DefaultLimit
	}
	if t.used[tenant] >= limit {
		return ErrExceeded{Tenant: tenant, Limit: limit}
	}
	t.used[tenant]++
	return nil
}

// Used reports how many calls tenant made today.
func (t *Tracker) Used(tenant string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rollOver()
	return t.used[tenant]
}

// rollOver starts a new count when the UTC day changes.
func (t *Tracker) rollOver() {
	day := t.Now().UTC().Format("2006-01-02")
	if day != t.day {
		t.day = day
		t.used = map[string]int{}
	}
}
