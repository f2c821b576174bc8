package codes

import "testing"

func TestEncode(t *testing.T) {
	cases := map[uint64]string{0: "2", 1: "3", 30: "z", 31: "32", 961: "322"}
	for n, want := range cases {
		if got := Encode(n); got != want {
			t.Errorf("Encode(%d) = %q, want %q", n, got, want)
		}
	}
}
