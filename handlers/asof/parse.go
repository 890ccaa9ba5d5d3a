package asof

import (
	"strings"
	"time"
)

// localLayouts are the wall-clock forms a moment may be written in, read
// in the owner's time zone: the command line's and a browser's
// datetime-local input's.
var localLayouts = []string{
	"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04:05", "2006-01-02T15:04",
}

// ParseTime reads a moment written as RFC 3339 or as a wall-clock time in
// loc; false when s is neither (it may name a turn).
func ParseTime(s string, loc *time.Location) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	for _, layout := range localLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
