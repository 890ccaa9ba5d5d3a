package postgres

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
)

// The raw benchmarks insert into raw_events, a copy of the events table
// (same columns, defaults and indexes), with plain autocommit INSERTs: the
// floor that Append's transaction, version check and result handling are
// measured against.

const rawInsertSQL = `INSERT INTO raw_events (stream_id, version, event_id, type, data, metadata) VALUES ($1, $2, $3, $4, $5, $6)`

var benchData = []byte(`{"text":"hello from the benchmark","chat_id":123456789,"lang":"en"}`)

const benchMeta = `{"correlation_id":"turn-1","channel":"telegram","sender":"42"}`

func benchStore(b *testing.B) *Store {
	b.Helper()
	s := openTest(b)
	b.Cleanup(func() { _ = s.Close() })
	if _, err := s.DB().Exec(`CREATE TABLE raw_events (LIKE events INCLUDING ALL)`); err != nil {
		b.Fatal(err)
	}
	return s
}

func benchEvents(n int) []domain.NewEvent {
	out := make([]domain.NewEvent, n)
	for i := range out {
		out[i] = domain.NewEvent{ID: uuid.New(), Type: "MessageReceived", Data: benchData, Metadata: domain.Metadata{CorrelationID: "turn-1", Channel: "telegram", Sender: "42"}}
	}
	return out
}

func rawInsert(ctx context.Context, s *Store, stream string, version int64) error {
	_, err := s.DB().ExecContext(ctx, rawInsertSQL, stream, version, uuid.New(), "MessageReceived", benchData, benchMeta)
	return err
}

func reportRate(b *testing.B, events int64, start time.Time) {
	b.ReportMetric(float64(events)/time.Since(start).Seconds(), "events/s")
}

func BenchmarkRawInsertSingle(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if err := rawInsert(ctx, s, "raw", int64(i+1)); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, int64(b.N), start)
}

func BenchmarkAppendSingle(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if _, err := s.Append(ctx, "single", eventstore.Exact(int64(i)), benchEvents(1)...); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, int64(b.N), start)
}

// parallel16 runs op from 16 goroutines, each on its own stream.
func parallel16(b *testing.B, op func(stream string, version int64) error) {
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
	var writer atomic.Int64
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		stream := fmt.Sprintf("w-%d", writer.Add(1))
		var v int64
		for pb.Next() {
			if err := op(stream, v); err != nil {
				b.Error(err)
				return
			}
			v++
		}
	})
	reportRate(b, int64(b.N), start)
}

func BenchmarkRawInsert16Writers(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	parallel16(b, func(stream string, v int64) error { return rawInsert(ctx, s, stream, v+1) })
}

func BenchmarkAppend16Writers(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	parallel16(b, func(stream string, v int64) error {
		_, err := s.Append(ctx, stream, eventstore.Exact(v), benchEvents(1)...)
		return err
	})
}

func benchmarkBatch(b *testing.B, size int) {
	s := benchStore(b)
	ctx := context.Background()
	batches := make([][]domain.NewEvent, b.N)
	for i := range batches {
		batches[i] = benchEvents(size)
	}
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if _, err := s.Append(ctx, "batch", eventstore.Exact(int64(i*size)), batches[i]...); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, int64(b.N*size), start)
}

func BenchmarkAppendBatch100(b *testing.B) { benchmarkBatch(b, 100) }

// BenchmarkAppendBatch1000 with -benchtime=1000x appends 1,000,000 events.
func BenchmarkAppendBatch1000(b *testing.B) { benchmarkBatch(b, 1000) }

// BenchmarkRawCopyBatch100 is the COPY alternative to Append's multi-row
// INSERT: 100 rows per transaction into raw_events, with no version check.
func BenchmarkRawCopyBatch100(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	const size = 100
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if err := rawCopy(ctx, s, i*size, size); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, int64(b.N*size), start)
}

func rawCopy(ctx context.Context, s *Store, from, size int) error {
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	stmt, err := tx.PrepareContext(ctx, `COPY raw_events (stream_id, version, event_id, type, data, metadata) FROM STDIN`)
	if err != nil {
		return err
	}
	for i := range size {
		if _, err := stmt.ExecContext(ctx, "copy", from+i+1, uuid.New(), "MessageReceived", string(benchData), benchMeta); err != nil {
			return err
		}
	}
	if _, err := stmt.ExecContext(ctx); err != nil {
		return err
	}
	if err := stmt.Close(); err != nil {
		return err
	}
	return tx.Commit()
}

// BenchmarkRawInsertBatch100 is a plain multi-row INSERT of 100 rows into
// raw_events, autocommit, with no version check.
func BenchmarkRawInsertBatch100(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	const size = 100
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		args, err := appendArgs("rawbatch", eventstore.Any, benchEvents(size), nil)
		if err != nil {
			b.Fatal(err)
		}
		_, err = s.DB().ExecContext(ctx, `INSERT INTO raw_events (stream_id, version, event_id, type, data, metadata)
SELECT $1, $2 + t.ord, t.id, t.type, t.data, t.metadata
FROM unnest($3::uuid[], $4::text[], $5::json[], $6::json[]) WITH ORDINALITY AS t(id, type, data, metadata, ord)`, args[0], int64(i*size), args[2], args[3], args[4], args[5])
		if err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, int64(b.N*size), start)
}
