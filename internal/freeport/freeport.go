// Package freeport chooses loopback TCP addresses for servers a test
// starts later, in another process or again after a stop. A port the
// kernel hands out for "127.0.0.1:0" comes from its ephemeral range, the
// one every outgoing connection on the machine also draws its local port
// from: closed again before the server binds it, such a port can be
// taken in between by any test's connection, and the server then fails
// with "address already in use". These ports are chosen below that range
// instead, where only another listener can take them.
package freeport

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The band ports are drawn from when the ephemeral range leaves room
// below it: above the well-known ports and those servers commonly use.
const (
	bandLow = 10000
	minBand = 1000
)

// tries bounds the draws per address before falling back to a port the
// kernel chooses.
const tries = 64

// Addr returns a loopback address ("127.0.0.1:port") nothing listens on
// now, for a server the test starts later.
func Addr(t testing.TB) string {
	t.Helper()
	return Addrs(t, 1)[0]
}

// Addrs returns n distinct such addresses.
func Addrs(t testing.TB, n int) []string {
	t.Helper()
	low, high := band(ephemeralRange())
	addrs := make([]string, 0, n)
	for range n {
		ln := listen(t, low, high)
		// Held open until all are chosen, so no two are the same.
		defer ln.Close()
		addrs = append(addrs, ln.Addr().String())
	}
	return addrs
}

// Listen returns a listener on such an address, for a server the test
// serves at once and may stop and start again on the same address.
func Listen(t testing.TB) net.Listener {
	t.Helper()
	low, high := band(ephemeralRange())
	return listen(t, low, high)
}

func listen(t testing.TB, low, high int) net.Listener {
	t.Helper()
	if high > low {
		for range tries {
			port := low + rand.IntN(high-low)
			if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
				return ln
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("freeport: %v", err)
	}
	return ln
}

// band is the half-open range of ports to draw from, outside the
// ephemeral range [lo, hi]; empty when neither side has room.
func band(lo, hi int) (low, high int) {
	switch {
	case lo-bandLow >= minBand:
		return bandLow, lo
	case 65535-hi >= minBand:
		return hi + 1, 65536
	}
	return 0, 0
}

// ephemeralRange is the kernel's range of local ports for outgoing
// connections (Linux; its default elsewhere).
func ephemeralRange() (lo, hi int) {
	lo, hi = 32768, 60999
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return lo, hi
	}
	l, err1 := strconv.Atoi(f[0])
	h, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || l > h {
		return lo, hi
	}
	return l, h
}
