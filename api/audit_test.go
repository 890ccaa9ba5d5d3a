package api

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/internal/audittest"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/auditlog"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// newAuditServer serves the audit of a store holding one turn of each kind.
func newAuditServer(t *testing.T, token string) *httptest.Server {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	for _, turn := range audittest.Turns() {
		audittest.Append(t, store, turn)
	}
	reg := events.NewRegistry()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	audittest.Project(t, store, readmodel.SQLite, reg, projections.Turns{})
	log, err := auditlog.New(store.DB())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer((&Server{Token: token, Audit: log, Logger: quiet}).Handler())
	t.Cleanup(srv.Close)
	return srv
}

// auditReply is what a GET answered.
type auditReply struct {
	StatusCode int
	Header     http.Header
}

func getAuditURL(t *testing.T, url, accept, token string) (auditReply, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return auditReply{StatusCode: resp.StatusCode, Header: resp.Header}, string(body)
}

func TestAuditEndpoint(t *testing.T) {
	srv := newAuditServer(t, "")

	resp, body := getAuditURL(t, srv.URL+"/api/audit?channel=telegram&limit=2", "", "")
	var page auditlog.Page
	if err := json.Unmarshal([]byte(body), &page); err != nil || resp.StatusCode != 200 || len(page.Rows) != 2 || page.Next == "" {
		t.Fatalf("%d %s (%v)", resp.StatusCode, body, err)
	}
	resp, body = getAuditURL(t, srv.URL+"/api/audit?channel=telegram&limit=2&after="+page.Next, "", "")
	var last auditlog.Page
	if err := json.Unmarshal([]byte(body), &last); err != nil || len(last.Rows) != 2 || last.Next != "" {
		t.Fatalf("second page %d %s", resp.StatusCode, body)
	}

	resp, body = getAuditURL(t, srv.URL+"/api/audit?grep=world", "text/csv", "")
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") || len(recs) != 2 || recs[1][len(recs[1])-2] != "hello, \"world\"\nsecond line" {
		t.Fatalf("csv %q (%v): %s", resp.Header.Get("Content-Type"), err, body)
	}
	resp, body = getAuditURL(t, srv.URL+"/api/audit?format=csv&limit=1", "", "")
	if !strings.Contains(resp.Header.Get("Link"), `rel="next"`) || !strings.HasPrefix(body, "turn_id,") {
		t.Fatalf("csv page: link %q body %s", resp.Header.Get("Link"), body)
	}

	_, body = getAuditURL(t, srv.URL+"/api/audit?stats=1&by=model", "", "")
	var stats struct{ Stats []auditlog.Stats }
	if err := json.Unmarshal([]byte(body), &stats); err != nil || len(stats.Stats) != 4 {
		t.Fatalf("stats: %s", body)
	}

	for _, bad := range []string{"status=happy", "since=yesterday", "format=xml", "after=zzz", "stats=1&by=week"} {
		if resp, body := getAuditURL(t, srv.URL+"/api/audit?"+bad, "", ""); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d %s", bad, resp.StatusCode, body)
		}
	}
}

func TestAuditEndpointNeedsToken(t *testing.T) {
	srv := newAuditServer(t, "s3cret")
	if resp, _ := getAuditURL(t, srv.URL+"/api/audit", "", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %d", resp.StatusCode)
	}
	if resp, body := getAuditURL(t, srv.URL+"/api/audit", "", "s3cret"); resp.StatusCode != 200 || !strings.Contains(body, `"rows"`) {
		t.Fatalf("with token: %d %s", resp.StatusCode, body)
	}
}
