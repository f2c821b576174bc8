package catalog

import (
	"fmt"
	"testing"
)

func products(n int) []Product {
	out := make([]Product, n)
	for i := range out {
		out[i] = Product{SKU: fmt.Sprintf("SKU-%03d", n-i), Name: "item", Price: 100 * i}
	}
	return out
}

func TestWalkingNextPageVisitsEveryProduct(t *testing.T) {
	all := products(23)
	seen := 0
	for page := 1; page != 0; {
		listing := List(all, page, 5)
		seen += len(listing.Items)
		page = listing.NextPage
	}
	if seen != 23 {
		t.Errorf("walked %d products, want 23", seen)
	}
}

func TestFirstPageIsSortedBySKU(t *testing.T) {
	listing := List(products(7), 1, 3)
	if listing.Pages != 3 {
		t.Errorf("Pages = %d, want 3", listing.Pages)
	}
	if listing.Items[0].SKU != "SKU-001" || listing.Items[2].SKU != "SKU-003" {
		t.Errorf("items = %v", listing.Items)
	}
}
