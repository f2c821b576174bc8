package shipment

import "fmt"

// Parcel is one tracked package.
type Parcel struct {
	ID      string   `json:"id"`
	Status  Status   `json:"status"`
	History []Status `json:"history"`
}

var allowed = map[Status][]Status{
	Pending: {Packed},
	Packed:  {Shipped, Pending},
	Shipped: {Delivered},
}

// Advance moves the parcel to next if that transition is allowed.
func (p *Parcel) Advance(next Status) error {
	for _, ok := range allowed[p.Status] {
		if ok == next {
			p.History = append(p.History, p.Status)
			p.Status = next
			return nil
		}
	}
	return fmt.Errorf("parcel %s: cannot go from %s to %s", p.ID, p.Status, next)
}
