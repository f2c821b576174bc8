package renew

import (
	"testing"
	"time"

	"example.com/certwatch/inventory"
)

var now = time.Date(2024, 11, 1, 8, 0, 0, 0, time.UTC)

func cert(host string, daysLeft int) inventory.Cert {
	return inventory.Cert{Host: host, NotAfter: now.Add(time.Duration(daysLeft) * 24 * time.Hour)}
}

func TestNeedsRenewal(t *testing.T) {
	cases := []struct {
		daysLeft int
		want     bool
	}{{90, false}, {31, false}, {30, true}, {10, true}, {-2, true}}
	for _, c := range cases {
		if got := NeedsRenewal(cert("h", c.daysLeft), now, DefaultLead); got != c.want {
			t.Errorf("%d days left: NeedsRenewal = %v, want %v", c.daysLeft, got, c.want)
		}
	}
}

func TestDueSoonestFirst(t *testing.T) {
	due := Due([]inventory.Cert{cert("a", 60), cert("b", 20), cert("c", 3)}, now, DefaultLead)
	if len(due) != 2 || due[0].Host != "c" || due[1].Host != "b" {
		t.Fatalf("due = %+v", due)
	}
}
