package api

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
)

// The turn stream has the API's authentication and refuses what is not a
// turn before it starts streaming.
func TestStreamTurnRefusals(t *testing.T) {
	_, _, srv := newServer(t, "s3cret")
	for _, tt := range []struct {
		name, path, token string
		want              int
	}{
		{"no token", "/api/turns/" + uuid.NewString() + "/stream", "", http.StatusUnauthorized},
		{"not a uuid", "/api/turns/nope/stream", "s3cret", http.StatusBadRequest},
		{"no such turn", "/api/turns/" + uuid.NewString() + "/stream", "s3cret", http.StatusNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+tt.path, nil)
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("answered %s, want %d", resp.Status, tt.want)
			}
		})
	}
}
