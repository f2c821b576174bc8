// Package probe checks that targets answer in time.
package probe

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"example.com/uptime/config"
)

// Result is the outcome of one probe.
type Result struct {
	Name    string
	Up      bool
	Latency time.Duration
	Err     error
}

// Timeout is how long a probe of t may take.
func Timeout(t config.Target) time.Duration {
	if t.Timeout <= 0 {
		return config.DefaultTimeout
	}
	return t.Timeout
}

// Check sends a GET to the target and reports whether it answered 2xx in time.
func Check(ctx context.Context, client *http.Client, t config.Target) Result {
	ctx, cancel := context.WithTimeout(ctx, Timeout(t))
	defer cancel()
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.URL, nil)
	if err != nil {
		return Result{Name: t.Name, Err: err}
	}
	resp, err := client.Do(req)
	latency := time.Since(start)
	if err != nil {
		return Result{Name: t.Name, Latency: latency, Err: err}
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return Result{Name: t.Name, Latency: latency, Err: fmt.Errorf("HTTP %d", resp.StatusCode)}
	}
	return Result{Name: t.Name, Up: true, Latency: latency}
}
