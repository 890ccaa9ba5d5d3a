// Package rowdiff compares two tables as multisets of rows: a live read
// model and its rebuild (omega replay --verify).
package rowdiff

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// Diff is one difference between a live read model's table and its
// rebuild.
type Diff struct {
	Projection, Table string
	OnlyLive          []string // rows in the live table the rebuild lacks
	OnlyRebuilt       []string // rows the rebuild has and the live table lacks
}

func (d Diff) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s.%s: %d row(s) differ\n", d.Projection, d.Table, len(d.OnlyLive)+len(d.OnlyRebuilt))
	for _, r := range d.OnlyLive {
		fmt.Fprintf(&b, "  - live:    %s\n", r)
	}
	for _, r := range d.OnlyRebuilt {
		fmt.Fprintf(&b, "  + rebuilt: %s\n", r)
	}
	return b.String()
}

// Compare reads the tables live and rebuilt of db and returns how they
// differ, labelled projection and table; false when they hold the same
// rows, each as often.
func Compare(ctx context.Context, db *sql.DB, projection, table, live, rebuilt string) (Diff, bool, error) {
	l, err := rows(ctx, db, live)
	if err != nil {
		return Diff{}, false, err
	}
	r, err := rows(ctx, db, rebuilt)
	if err != nil {
		return Diff{}, false, err
	}
	d := Diff{Projection: projection, Table: table, OnlyLive: missing(l, r), OnlyRebuilt: missing(r, l)}
	return d, len(d.OnlyLive)+len(d.OnlyRebuilt) > 0, nil
}

// missing returns the rows of a that b lacks, as often as it lacks them,
// sorted.
func missing(a, b map[string]int) []string {
	var out []string
	for row, n := range a {
		for i := b[row]; i < n; i++ {
			out = append(out, row)
		}
	}
	sort.Strings(out)
	return out
}

// rows returns a table's rows rendered as text, counted as a multiset.
func rows(ctx context.Context, db *sql.DB, table string) (map[string]int, error) {
	rs, err := db.QueryContext(ctx, "SELECT * FROM "+table)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("scan %s: %w", table, err)
		}
		parts := make([]string, len(cols))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			parts[i] = fmt.Sprintf("%s=%v", cols[i], v)
		}
		out["("+strings.Join(parts, ", ")+")"]++
	}
	return out, rs.Err()
}
