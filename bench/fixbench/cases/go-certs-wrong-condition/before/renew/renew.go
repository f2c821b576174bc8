// Package renew decides which certificates to renew now.
package renew

import (
	"sort"
	"time"

	"example.com/certwatch/inventory"
)

// DefaultLead is how long before expiry we renew: Let's Encrypt suggests 30 days.
const DefaultLead = 30 * 24 * time.Hour

// NeedsRenewal reports whether c expires within lead of now (or already has).
func NeedsRenewal(c inventory.Cert, now time.Time, lead time.Duration) bool {
	return !now.Before(c.NotAfter.Add(-lead))
}

// Due returns the certificates to renew now, soonest expiry first.
func Due(certs []inventory.Cert, now time.Time, lead time.Duration) []inventory.Cert {
	var due []inventory.Cert
	for _, c := range certs {
		if NeedsRenewal(c, now, lead) {
			due = append(due, c)
		}
	}
	sort.Slice(due, func(i, j int) bool { return due[i].NotAfter.Before(due[j].NotAfter) })
	return due
}
