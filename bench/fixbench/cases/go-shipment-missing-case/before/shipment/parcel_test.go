package shipment

import (
	"encoding/json"
	"testing"
)

func TestHappyPath(t *testing.T) {
	p := &Parcel{ID: "P-1"}
	for _, next := range []Status{Packed, Shipped, Delivered} {
		if err := p.Advance(next); err != nil {
			t.Fatal(err)
		}
	}
	if len(p.History) != 3 {
		t.Errorf("history = %v", p.History)
	}
}

func TestCannotSkipPacking(t *testing.T) {
	p := &Parcel{ID: "P-2"}
	err := p.Advance(Shipped)
	if err == nil || err.Error() != "parcel P-2: cannot go from pending to shipped" {
		t.Errorf("err = %v", err)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	in := Parcel{ID: "P-3", Status: Shipped, History: []Status{Pending, Packed}}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != `{"id":"P-3","status":"shipped","history":["pending","packed"]}` {
		t.Errorf("json = %s", data)
	}
	var out Parcel
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	if out.Status != Shipped || len(out.History) != 2 {
		t.Errorf("round trip = %+v", out)
	}
}
