// Package paging computes page windows for list endpoints.
package paging

// Page is one window of a list; Number is 1-based.
type Page struct {
	Number, Size, Total int
}

// PageCount is how many pages total items fill; an empty list still has one (empty) page.
func PageCount(total, size int) int {
	if total <= 0 || size <= 0 {
		return 1
	}
	pages := total / size
	if total%size != 0 {
		pages++
	}
	return pages
}

// Bounds returns the half-open index range [start, end) of the page, clamped to the list.
func (p Page) Bounds() (start, end int) {
	if p.Number < 1 || p.Size <= 0 {
		return 0, 0
	}
	start = (p.Number - 1) * p.Size
	if start > p.Total {
		start = p.Total
	}
	end = start + p.Size
	if end > p.Total {
		end = p.Total
	}
	return start, end
}

// HasNext reports whether a page follows this one.
func (p Page) HasNext() bool {
	return p.Number < PageCount(p.Total, p.Size)
}
