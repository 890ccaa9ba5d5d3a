package suite

import (
	"strings"
	"testing"

	"github.com/omega-gateway/omega/providers"
)

// Collect streams req through s and returns the reply and every delta.
func Collect(t *testing.T, s providers.Streamer, req providers.Request) (providers.Response, []providers.Delta, error) {
	t.Helper()
	var deltas []providers.Delta
	resp, err := s.Stream(t.Context(), req, func(d providers.Delta) { deltas = append(deltas, d) })
	return resp, deltas, err
}

// JoinText is the text of deltas, in order: what a person saw written.
func JoinText(deltas []providers.Delta) string {
	var b strings.Builder
	for _, d := range deltas {
		b.WriteString(d.Text)
	}
	return b.String()
}
