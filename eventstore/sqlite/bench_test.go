package sqlite

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
)

// Every benchmark runs under both synchronous modes the store could use, and
// each Append benchmark has a raw reference: autocommit single-row INSERTs
// through database/sql into the same events table, in a file opened with
// the same pragmas and the same one-connection write pool.
var syncModes = []string{"FULL", "NORMAL"}

const writers = 16

func benchStore(b *testing.B, synchronous string) *Store {
	b.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := open(context.Background(), filepath.Join(b.TempDir(), "events.db"), Options{Logger: logger}, synchronous)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

var benchData = []byte(`{"text":"hello from the benchmark","chat_id":123456789,"tokens":42}`)

func benchEvent() domain.NewEvent {
	return domain.NewEvent{ID: uuid.New(), Type: "MessageReceived", Data: benchData,
		Metadata: domain.Metadata{CorrelationID: "turn-1", Channel: "telegram", Sender: "42"}}
}

// rawInsert writes one event row the way a hand-written INSERT would: the
// caller supplies the version, nothing is checked.
func rawInsert(ctx context.Context, s *Store, stream string, version int64) error {
	e := benchEvent()
	_, err := s.DB().ExecContext(ctx, insertEvent, stream, version, e.ID.String(), e.Type, string(e.Data),
		`{"correlation_id":"turn-1","channel":"telegram","sender":"42"}`, time.Now().UnixMicro())
	return err
}

// meter reports, besides ns/op, the process CPU time per op and events/s.
// The CPU figure stays meaningful on a machine shared with other loads,
// where wall time mostly measures the wait for a core or the disk.
type meter struct {
	b     *testing.B
	start time.Time
	cpu   time.Duration
}

func startMeter(b *testing.B) *meter {
	b.ResetTimer()
	return &meter{b: b, start: time.Now(), cpu: cpuTime(b)}
}

func (m *meter) stop(eventsPerOp int) {
	m.b.StopTimer()
	n := float64(m.b.N)
	m.b.ReportMetric(float64((cpuTime(m.b)-m.cpu).Microseconds())/n, "cpu-µs/op")
	m.b.ReportMetric(n*float64(eventsPerOp)/time.Since(m.start).Seconds(), "events/s")
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func eachSync(b *testing.B, fn func(b *testing.B, s *Store)) {
	for _, mode := range syncModes {
		b.Run(mode, func(b *testing.B) { fn(b, benchStore(b, mode)) })
	}
}

func BenchmarkRawInsertSingle(b *testing.B) {
	eachSync(b, func(b *testing.B, s *Store) {
		ctx := context.Background()
		var v int64
		m := startMeter(b)
		for b.Loop() {
			v++
			if err := rawInsert(ctx, s, "raw", v); err != nil {
				b.Fatal(err)
			}
		}
		m.stop(1)
	})
}

func BenchmarkAppendSingle(b *testing.B) {
	eachSync(b, func(b *testing.B, s *Store) {
		ctx := context.Background()
		var v int64
		m := startMeter(b)
		for b.Loop() {
			if _, err := s.Append(ctx, "single", eventstore.Exact(v), benchEvent()); err != nil {
				b.Fatal(err)
			}
			v++
		}
		m.stop(1)
	})
}

// parallel runs b.N operations spread over 16 goroutines, each with its own
// stream and version counter, and reports events/s.
func parallel(b *testing.B, op func(ctx context.Context, stream string, version int64) error) {
	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	m := startMeter(b)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stream := fmt.Sprintf("w-%d", w)
			var v int64
			for next.Add(1) <= int64(b.N) {
				if err := op(ctx, stream, v); err != nil {
					b.Error(err)
					return
				}
				v++
			}
		}()
	}
	wg.Wait()
	m.stop(1)
}

func BenchmarkRawInsert16Writers(b *testing.B) {
	eachSync(b, func(b *testing.B, s *Store) {
		parallel(b, func(ctx context.Context, stream string, v int64) error {
			return rawInsert(ctx, s, stream, v+1)
		})
	})
}

func BenchmarkAppend16Writers(b *testing.B) {
	eachSync(b, func(b *testing.B, s *Store) {
		parallel(b, func(ctx context.Context, stream string, v int64) error {
			_, err := s.Append(ctx, stream, eventstore.Exact(v), benchEvent())
			return err
		})
	})
}

func BenchmarkAppendBatch100(b *testing.B) {
	eachSync(b, func(b *testing.B, s *Store) {
		ctx := context.Background()
		batch := make([]domain.NewEvent, 100)
		var v int64
		m := startMeter(b)
		for b.Loop() {
			for i := range batch {
				batch[i] = benchEvent()
			}
			if _, err := s.Append(ctx, "batch", eventstore.Exact(v), batch...); err != nil {
				b.Fatal(err)
			}
			v += int64(len(batch))
		}
		m.stop(len(batch))
	})
}
