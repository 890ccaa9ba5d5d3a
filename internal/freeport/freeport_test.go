package freeport

import (
	"net"
	"strconv"
	"testing"
)

// The addresses are distinct, free, and outside the ephemeral range.
func TestAddrsAreFreeAndOutsideTheEphemeralRange(t *testing.T) {
	lo, hi := ephemeralRange()
	addrs := Addrs(t, 20)
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] {
			t.Fatalf("%s chosen twice in %v", a, addrs)
		}
		seen[a] = true
		_, p, err := net.SplitHostPort(a)
		if err != nil {
			t.Fatal(err)
		}
		port, _ := strconv.Atoi(p)
		if port >= lo && port <= hi {
			t.Errorf("%s is in the ephemeral range %d-%d", a, lo, hi)
		}
		ln, err := net.Listen("tcp", a)
		if err != nil {
			t.Fatalf("%s is not free: %v", a, err)
		}
		ln.Close()
	}
}

func TestBand(t *testing.T) {
	for _, c := range []struct{ lo, hi, low, high int }{
		{32768, 60999, 10000, 32768}, // Linux's default
		{1024, 60999, 61000, 65536},  // no room below: above
		{1024, 65535, 0, 0},          // none: the kernel chooses
		{10500, 65000, 0, 0},
	} {
		if low, high := band(c.lo, c.hi); low != c.low || high != c.high {
			t.Errorf("band(%d, %d) = %d, %d; want %d, %d", c.lo, c.hi, low, high, c.low, c.high)
		}
	}
}
