// Package store keeps short codes and their target URLs in memory.
package store

import (
	"sync"

	"example.com/shorty/internal/codes"
)

// Store maps short codes to URLs. It is safe for concurrent use.
type Store struct {
	mu      sync.RWMutex
	next    uint64
	targets map[string]string
	hits    map[string]int
}

// New returns an empty store.
func New() *Store {
	return &Store{next: 1000, targets: map[string]string{}, hits: map[string]int{}}
}

// Add stores url and returns its new code.
func (s *Store) Add(url string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	code := codes.Encode(s.next)
	s.next++
	s.targets[code] = url
	return code
}

// Lookup returns the URL for code and counts the hit.
func (s *Store) Lookup(code string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	url, ok := s.targets[code]
	if ok {
		s.hits[code]++
	}
	return url, ok
}

// Hits returns how often code was looked up.
func (s *Store) Hits(code string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.hits[code]
}
