// Package shipment tracks parcels through their delivery states.
package shipment

import "fmt"

// Status is where a parcel is in its life.
type Status int

const (
	Pending Status = iota
	Packed
	Shipped
	Delivered
)

func (s Status) String() string {
	switch s {
	case Pending:
		return "pending"
	case Packed:
		return "packed"
	case Shipped:
		return "shipped"
	case Delivered:
		return "delivered"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// ParseStatus reads the String form back.
func ParseStatus(text string) (Status, error) {
	for s := Pending; s <= Delivered; s++ {
		if s.String() == text {
			return s, nil
		}
	}
	return 0, fmt.Errorf("unknown status %q", text)
}

// MarshalText makes Status read as its name in JSON.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText is the inverse of MarshalText.
func (s *Status) UnmarshalText(b []byte) error {
	parsed, err := ParseStatus(string(b))
	if err != nil {
		return err
	}
	*s = parsed
	return nil
}
