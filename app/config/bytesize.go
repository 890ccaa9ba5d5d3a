package config

import (
	"fmt"
	"strconv"
	"strings"
)

// ByteSize is a number of bytes written as Go's GOMEMLIMIT is: digits
// with an optional unit B, KiB, MiB, GiB or TiB ("48MiB", "1GiB", "0").
type ByteSize int64

var byteUnits = []struct {
	suffix string
	n      int64
}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

// UnmarshalText parses a size (caarlos0/env uses it).
func (b *ByteSize) UnmarshalText(text []byte) error {
	s := strings.TrimSpace(string(text))
	unit := int64(1)
	for _, u := range byteUnits {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, unit = rest, u.n
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/unit {
		return fmt.Errorf("%q is not a size such as 48MiB, 1GiB or 0", string(text))
	}
	*b = ByteSize(n * unit)
	return nil
}

// String writes the size in the largest unit that divides it.
func (b ByteSize) String() string {
	for _, u := range byteUnits {
		if b != 0 && int64(b)%u.n == 0 {
			return strconv.FormatInt(int64(b)/u.n, 10) + u.suffix
		}
	}
	return "0"
}
