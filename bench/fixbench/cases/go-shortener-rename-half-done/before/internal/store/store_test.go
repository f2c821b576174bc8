package store

import "testing"

func TestAddThenLookupCountsHits(t *testing.T) {
	s := New()
	code := s.Add("https://example.org/docs")
	for i := 0; i < 3; i++ {
		url, ok := s.Lookup(code)
		if !ok || url != "https://example.org/docs" {
			t.Fatalf("Lookup(%q) = %q, %v", code, url, ok)
		}
	}
	if got := s.Hits(code); got != 3 {
		t.Errorf("Hits = %d, want 3", got)
	}
	if _, ok := s.Lookup("nope"); ok {
		t.Error("unknown code resolved")
	}
}
