package filter

import (
	"testing"

	"example.com/logq/internal/logfmt"
)

func TestMatchAllConditions(t *testing.T) {
	q, err := ParseQuery([]string{"level=error", "service!=cron"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		entry logfmt.Entry
		want  bool
	}{
		{logfmt.Entry{"level": "error", "service": "api"}, true},
		{logfmt.Entry{"level": "error", "service": "cron"}, false},
		{logfmt.Entry{"level": "info", "service": "api"}, false},
	}
	for _, tc := range cases {
		if got := q.Match(tc.entry); got != tc.want {
			t.Errorf("Match(%v) = %v, want %v", tc.entry, got, tc.want)
		}
	}
}

func TestParseQueryRejectsBareWords(t *testing.T) {
	if _, err := ParseQuery([]string{"error"}); err == nil {
		t.Error("bare word accepted")
	}
}
