package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/omega-gateway/omega/eventstore/storetest"
	"github.com/omega-gateway/omega/internal/pgtest"
)

func openTest(t testing.TB) *Store { return openDSN(t, pgtest.DSN(t)) }

func openDSN(t testing.TB, dsn string) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, dsn, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return s
}

// Two processes on one database, each with its own stream cache.
func TestStreamCache(t *testing.T) {
	storetest.RunStreamCache(t, func(t *testing.T) (storetest.Store, storetest.Store) {
		dsn := pgtest.DSN(t)
		a, b := openDSN(t, dsn), openDSN(t, dsn)
		t.Cleanup(func() { a.Close(); b.Close() })
		return a, b
	})
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store { return openTest(t) }, storetest.Options{})
}

func TestRedact(t *testing.T) {
	cases := []struct {
		dsn      string
		contains []string
	}{
		{"postgres://omega:s3cret@db.example:5433/omega?sslmode=disable", []string{"db.example:5433", "/omega", "omega:xxxxx@"}},
		{"postgresql://omega@db/omega?password=s3cret&sslmode=require", []string{"db/omega", "password=xxxxx", "sslmode=require"}},
		{"host=db port=5433 dbname=omega user=omega password=s3cret", []string{"host=db", "port=5433", "dbname=omega", "password=xxxxx"}},
		{"host=db password='s3cret with spaces' dbname=omega", []string{"host=db", "password=xxxxx", "dbname=omega"}},
		{`host=db password=s3cret\ escaped dbname=omega`, []string{"host=db", "password=xxxxx", "dbname=omega"}},
		{"host=db password='s3cret", []string{"unparseable"}},
		{"postgres://omega:s3cret@db:bad/omega", []string{"unparseable"}},
	}
	for _, c := range cases {
		got := Redact(c.dsn)
		if strings.Contains(got, "s3cret") {
			t.Errorf("Redact(%q) = %q leaks the password", c.dsn, got)
		}
		for _, want := range c.contains {
			if !strings.Contains(got, want) {
				t.Errorf("Redact(%q) = %q, want it to contain %q", c.dsn, got, want)
			}
		}
	}
}

func TestOpenUnreachableNamesServerNotPassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dsn := "postgres://omega:s3cret@127.0.0.1:1/omegadb?sslmode=disable&connect_timeout=2"
	_, err := Open(ctx, dsn, Options{})
	if err == nil {
		t.Fatal("Open succeeded against port 1")
	}
	msg := err.Error()
	for _, want := range []string{"127.0.0.1", "port 1", `"omegadb"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %s", msg, want)
		}
	}
	if strings.Contains(msg, "s3cret") {
		t.Errorf("error %q leaks the password", msg)
	}
}

func TestParseKeyValue(t *testing.T) {
	cases := []struct {
		in   string
		want [][2]string
		ok   bool
	}{
		{"host=db  port = 5433", [][2]string{{"host", "db"}, {"port", "5433"}}, true},
		{`password='it''s' x=1`, nil, false},
		{`password='a\'b c' user=u`, [][2]string{{"password", "a'b c"}, {"user", "u"}}, true},
		{`password=a\ b`, [][2]string{{"password", "a b"}}, true},
		{`password=''`, [][2]string{{"password", ""}}, true},
		{`password=ab\`, nil, false},
		{"=v", nil, false},
		{"host", nil, false},
	}
	for _, c := range cases {
		got, ok := parseKeyValue(c.in)
		if ok != c.ok || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("parseKeyValue(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// The array literal of an append's payloads is pq.Array's, and reads back
// in PostgreSQL as the payloads themselves, quotes, backslashes and all.
func TestArrayLiteral(t *testing.T) {
	db, err := sql.Open("postgres", pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	items := []string{
		`{"text":"say \"hi\" \\ bye","n":1}`,
		`{}`,
		`"\\\\"`,
		`{"unicode":"żółw ✓","nl":"a\nb"}`,
	}
	raw := make([][]byte, len(items))
	for i, it := range items {
		raw[i] = []byte(it)
	}
	lit := arrayLiteral(raw)
	want, err := pq.Array(items).Value()
	if err != nil {
		t.Fatal(err)
	}
	if lit != want {
		t.Errorf("literal %s, pq.Array's %s", lit, want)
	}
	var got []string
	if err := db.QueryRow(`SELECT array_agg(x::text) FROM unnest($1::json[]) AS x`, lit).Scan(pq.Array(&got)); err != nil {
		t.Fatalf("%s: %v", lit, err)
	}
	if !slices.Equal(got, items) {
		t.Fatalf("read back %q, want %q", got, items)
	}
}
