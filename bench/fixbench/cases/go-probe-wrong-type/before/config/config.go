// Package config reads the probe configuration file.
package config

import (
	"encoding/json"
	"fmt"
	"time"
)

// Target is one URL to probe.
type Target struct {
	Name    string        `json:"name"`
	URL     string        `json:"url"`
	Timeout time.Duration `json:"timeout"` // nanoseconds in the file; 0 means DefaultTimeout
}

// DefaultTimeout applies to targets that set none.
const DefaultTimeout = 5 * time.Second

// Parse reads a JSON list of targets.
func Parse(data []byte) ([]Target, error) {
	var targets []Target
	if err := json.Unmarshal(data, &targets); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	for i, t := range targets {
		if t.Name == "" || t.URL == "" {
			return nil, fmt.Errorf("config: target %d needs a name and a url", i+1)
		}
	}
	return targets, nil
}
