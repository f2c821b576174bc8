package batch

import (
	"fmt"
	"log"
)

// Sink receives flushed batches, e.g. an HTTP client for the metrics backend.
type Sink interface {
	Write(series map[string][]float64) error
}

// Batcher buffers samples until MaxSamples are held, then flushes them to Sink.
type Batcher struct {
	Sink       Sink
	MaxSamples int
	Logger     *log.Logger

	pending map[string][]float64
	count   int
}

// Add buffers s and flushes when the batch is full.
func (b *Batcher) Add(s Sample) error {
	if b.pending == nil {
		b.pending = map[string][]float64{}
	}
	key := SeriesKey(s)
	b.pending[key] = append(b.pending[key], s.Value)
	b.count++
	if b.count >= b.MaxSamples {
		return b.Flush()
	}
	return nil
}

// Flush sends everything buffered; on error the batch is kept for the next try.
func (b *Batcher) Flush() error {
	if b.count == 0 {
		return nil
	}
	if err := b.Sink.Write(b.pending); err != nil {
		return fmt.Errorf("flush %d samples: %w", b.count, err)
	}
	if b.Logger != nil {
		b.Logger.Printf("flushed %d samples", b.count)
	}
	b.pending, b.count = nil, 0
	return nil
}
