package paging

import "testing"

func TestPageCount(t *testing.T) {
	cases := []struct{ total, size, want int }{
		{0, 10, 1}, {1, 10, 1}, {10, 10, 1}, {11, 10, 2}, {25, 10, 3},
	}
	for _, c := range cases {
		if got := PageCount(c.total, c.size); got != c.want {
			t.Errorf("PageCount(%d, %d) = %d, want %d", c.total, c.size, got, c.want)
		}
	}
}

func TestBoundsClampToTheList(t *testing.T) {
	start, end := Page{Number: 3, Size: 10, Total: 25}.Bounds()
	if start != 20 || end != 25 {
		t.Errorf("Bounds = [%d, %d), want [20, 25)", start, end)
	}
	start, end = Page{Number: 9, Size: 10, Total: 25}.Bounds()
	if start != 25 || end != 25 {
		t.Errorf("past the end: Bounds = [%d, %d), want [25, 25)", start, end)
	}
}
