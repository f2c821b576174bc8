// Package batch groups metric samples by series and flushes them in batches.
package batch

import (
	"sort"
	"strings"
)

// Sample is one measurement of a series.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// SeriesKey is the canonical "name{k=v,...}" form of a sample's series, labels sorted.
func SeriesKey(s Sample) string {
	keys := make([]string, 0, len(s.Labels))
	for k := range s.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(s.Name)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + s.Labels[k])
	}
	b.WriteByte('}')
	return b.String()
}
