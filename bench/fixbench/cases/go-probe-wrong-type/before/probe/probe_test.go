package probe

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"example.com/uptime/config"
)

// fakeTransport answers every request with status after delay, or fails when the request's
// context ends first: the probes never touch the network in tests.
type fakeTransport struct {
	status int
	block  bool
}

func (f fakeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if f.block {
		<-req.Context().Done()
		return nil, req.Context().Err()
	}
	return &http.Response{StatusCode: f.status, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

func TestTimeoutDefaults(t *testing.T) {
	if got := Timeout(config.Target{}); got != config.DefaultTimeout {
		t.Errorf("Timeout = %v, want %v", got, config.DefaultTimeout)
	}
}

func TestSlowTargetIsDown(t *testing.T) {
	client := &http.Client{Transport: fakeTransport{block: true}}
	target := config.Target{Name: "slow", URL: "http://slow.invalid/"}
	target.Timeout = Timeout(target) / 50 // 100ms
	res := Check(context.Background(), client, target)
	if res.Up || res.Err == nil {
		t.Fatalf("slow target reported up: %+v", res)
	}
}

func TestStatusDecidesUp(t *testing.T) {
	for status, want := range map[int]bool{200: true, 204: true, 503: false} {
		client := &http.Client{Transport: fakeTransport{status: status}}
		res := Check(context.Background(), client, config.Target{Name: "x", URL: "http://x.invalid/"})
		if res.Up != want {
			t.Errorf("HTTP %d: Up = %v, want %v", status, res.Up, want)
		}
	}
}
