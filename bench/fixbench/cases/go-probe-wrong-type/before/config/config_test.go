package config

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	targets, err := Parse([]byte(`[{"name":"api","url":"https://api.example/healthz","timeout":2000000000},{"name":"www","url":"https://www.example/"}]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != 2 || targets[0].Timeout != 2*time.Second || targets[1].Timeout != 0 {
		t.Fatalf("targets = %+v", targets)
	}
}

func TestParseNeedsNameAndURL(t *testing.T) {
	if _, err := Parse([]byte(`[{"name":"api"}]`)); err == nil {
		t.Fatal("target without url accepted")
	}
}
