// Package inventory reads the list of certificates we manage.
package inventory

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"
)

// Cert is one managed certificate.
type Cert struct {
	Host     string
	NotAfter time.Time
}

// Parse reads "host not-after" lines (RFC 3339 time); '#' starts a comment.
func Parse(r io.Reader) ([]Cert, error) {
	var certs []Cert
	scanner := bufio.NewScanner(r)
	for n := 1; scanner.Scan(); n++ {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("line %d: want \"host not-after\", got %q", n, line)
		}
		notAfter, err := time.Parse(time.RFC3339, fields[1])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		certs = append(certs, Cert{Host: fields[0], NotAfter: notAfter})
	}
	return certs, scanner.Err()
}
