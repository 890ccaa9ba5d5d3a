package pgtest

import (
	"context"
	"database/sql"
	"strings"
	"testing"
)

func TestDSNUsesFreshSchema(t *testing.T) {
	dsn := DSN(t)
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var schema string
	if err := db.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(schema, "omega_t_") {
		t.Fatalf("current_schema() = %q, want omega_t_*", schema)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE probe (id int)"); err != nil {
		t.Fatal(err)
	}
	var where string
	if err := db.QueryRowContext(ctx, "SELECT table_schema FROM information_schema.tables WHERE table_name = 'probe' AND table_schema = $1", schema).Scan(&where); err != nil {
		t.Fatalf("probe table not created in %s: %v", schema, err)
	}
	if other := DSN(t); other == dsn {
		t.Fatal("two calls returned the same DSN")
	}
}

func TestWithSearchPath(t *testing.T) {
	cases := []struct{ in, want string }{
		{"postgres://u@h:5432/db?sslmode=disable", "postgres://u@h:5432/db?search_path=s&sslmode=disable"},
		{"host=h dbname=db", "host=h dbname=db search_path=s"},
	}
	for _, c := range cases {
		got, err := withSearchPath(c.in, "s")
		if err != nil || got != c.want {
			t.Errorf("withSearchPath(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestRedact(t *testing.T) {
	got := redact("postgres://u:secret@h:5432/db")
	if strings.Contains(got, "secret") || !strings.Contains(got, "h:5432/db") {
		t.Fatalf("redact = %q", got)
	}
	if got := redact("host=h password=secret"); strings.Contains(got, "secret") {
		t.Fatalf("redact = %q", got)
	}
}
