package engine

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"testing"

	"github.com/lib/pq"
)

func TestTransientTellsOutagesFromBadEvents(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{&pq.Error{Code: "08006"}, true},                           // connection failure
		{&pq.Error{Code: "57P01"}, true},                           // admin shutdown (a restart)
		{&pq.Error{Code: "40001"}, true},                           // serialization failure
		{&pq.Error{Code: "53300"}, true},                           // too many connections
		{&pq.Error{Code: "54000"}, false},                          // index row size exceeds maximum
		{&pq.Error{Code: "22021"}, false},                          // invalid byte sequence (NUL)
		{&pq.Error{Code: "23514"}, false},                          // check violation
		{fmt.Errorf("apply: %w", driver.ErrBadConn), true},         // lost connection
		{errors.New("database is locked (5) (SQLITE_BUSY)"), true}, // SQLite writer busy
		{errors.New("dial tcp 127.0.0.1:5432: connect: connection refused"), true},
		{errors.New("json: cannot unmarshal number into Go struct field"), false},
	}
	for _, c := range cases {
		if got := transient(c.err); got != c.want {
			t.Errorf("transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
