package batch

import (
	"bytes"
	"errors"
	"log"
	"strings"
	"testing"
)

type memorySink struct {
	batches []map[string][]float64
	fail    bool
}

func (m *memorySink) Write(series map[string][]float64) error {
	if m.fail {
		return errors.New("backend unavailable")
	}
	m.batches = append(m.batches, series)
	return nil
}

func TestFlushesWhenFull(t *testing.T) {
	sink := &memorySink{}
	var logs bytes.Buffer
	b := &Batcher{Sink: sink, MaxSamples: 3, Logger: log.New(&logs, "", 0)}
	for _, v := range []float64{1, 2, 3} {
		if err := b.Add(Sample{Name: "http_requests", Labels: map[string]string{"code": "200"}, Value: v}); err != nil {
			t.Fatal(err)
		}
	}
	if len(sink.batches) != 1 {
		t.Fatalf("got %d batches, want 1", len(sink.batches))
	}
	if got := sink.batches[0]["http_requests{code=200}"]; len(got) != 3 {
		t.Errorf("series holds %v", got)
	}
	if !strings.Contains(logs.String(), "flushed 3 samples") {
		t.Errorf("log = %q", logs.String())
	}
}

func TestFailedFlushKeepsTheBatch(t *testing.T) {
	sink := &memorySink{fail: true}
	b := &Batcher{Sink: sink, MaxSamples: 10}
	_ = b.Add(Sample{Name: "queue_depth", Value: 7})
	if err := b.Flush(); err == nil {
		t.Fatal("flush to a failing sink succeeded")
	}
	sink.fail = false
	if err := b.Flush(); err != nil || len(sink.batches) != 1 {
		t.Fatalf("retry: err=%v batches=%d", err, len(sink.batches))
	}
}

func TestSeriesKeySortsLabels(t *testing.T) {
	got := SeriesKey(Sample{Name: "m", Labels: map[string]string{"z": "1", "a": "2"}})
	if got != "m{a=2,z=1}" {
		t.Errorf("SeriesKey = %q", got)
	}
}
