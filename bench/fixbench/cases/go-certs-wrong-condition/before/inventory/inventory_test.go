package inventory

import (
	"strings"
	"testing"
)

func TestParseSkipsComments(t *testing.T) {
	certs, err := Parse(strings.NewReader("# prod\napi.example.com 2025-01-31T00:00:00Z\n\nwww.example.com 2024-12-01T12:00:00Z\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(certs) != 2 || certs[1].Host != "www.example.com" {
		t.Fatalf("certs = %+v", certs)
	}
}

func TestParseNamesTheBadLine(t *testing.T) {
	_, err := Parse(strings.NewReader("a.example.com 2025-01-01T00:00:00Z\nb.example.com tomorrow\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "line 2:") {
		t.Fatalf("err = %v", err)
	}
}
