// Package catalog lists products page by page.
package catalog

import (
	"sort"

	"example.com/catalog/paging"
)

// Product is one item for sale.
type Product struct {
	SKU   string
	Name  string
	Price int // cents
}

// Listing is one page of products and where to go next.
type Listing struct {
	Items    []Product
	Page     int
	Pages    int
	NextPage int // 0 when this is the last page
}

// List returns page `page` (1-based) of products sorted by SKU.
func List(all []Product, page, size int) Listing {
	sorted := append([]Product(nil), all...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].SKU < sorted[j].SKU })
	p := paging.Page{Number: page, Size: size, Total: len(sorted)}
	start, end := p.Bounds()
	listing := Listing{Items: sorted[start:end], Page: page, Pages: paging.PageCount(len(sorted), size)}
	if p.HasNext() {
		listing.NextPage = page + 1
	}
	return listing
}
