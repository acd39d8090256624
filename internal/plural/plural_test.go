package plural

import "testing"

func TestN(t *testing.T) {
	for n, want := range map[int]string{0: "0 items", 1: "1 item", 2: "2 items", -1: "-1 items"} {
		if got := N(n, "item"); got != want {
			t.Errorf("N(%d) = %q, want %q", n, got, want)
		}
	}
}
