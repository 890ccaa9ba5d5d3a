package task

import (
	"errors"
	"testing"
	"time"
)

func firedTask(repeat string, due time.Time) Task {
	var t Task
	t.Apply(TaskScheduled{ID: "t1", Description: "call Juan", Due: due, Repeat: repeat, Kind: TaskKindReminder}, 1, due)
	return t
}

func TestFireMissedSeriesFiresOnceAndMovesToTheFuture(t *testing.T) {
	madrid, _ := time.LoadLocation("Europe/Madrid")
	due := time.Date(2026, 3, 1, 9, 0, 0, 0, madrid)
	task := firedTask(RepeatDaily, due)
	now := time.Date(2026, 3, 5, 12, 0, 0, 0, madrid)
	ps, err := task.Fire(now, madrid, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 {
		t.Fatalf("events %v", ps)
	}
	if f := ps[0].(TaskFired); !f.Late || f.Occurrence != 1 || !f.Due.Equal(due) {
		t.Fatalf("fired %+v", f)
	}
	if a := ps[1].(TaskDueAdvanced); !a.Due.Equal(time.Date(2026, 3, 6, 9, 0, 0, 0, madrid)) {
		t.Fatalf("next %v", a.Due.In(madrid))
	}
	for i, p := range ps {
		task.Apply(p, int64(i+2), now)
	}
	if _, err := task.Fire(now, madrid, time.Minute); !errors.Is(err, ErrTaskInFlight) {
		t.Fatalf("second fire: %v", err)
	}
	if d, ok := task.NextDue(); !ok || !d.Equal(due) {
		t.Fatalf("in flight: next due %v %v", d, ok)
	}
	task.Apply(TaskDelivered{ID: "t1", Occurrence: 1, Attempt: 1}, 4, now)
	if d, _ := task.NextDue(); !d.Equal(time.Date(2026, 3, 6, 9, 0, 0, 0, madrid)) || task.Status != TaskStatusPending {
		t.Fatalf("after delivery: %v %s", d, task.Status)
	}
}

func TestFireOnceAndFailForGood(t *testing.T) {
	due := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	task := firedTask(RepeatOnce, due)
	if _, err := task.Fire(due.Add(-time.Second), time.UTC, time.Minute); !errors.Is(err, ErrTaskNotDue) {
		t.Fatalf("early fire: %v", err)
	}
	ps, err := task.Fire(due.Add(time.Second), time.UTC, time.Minute)
	if err != nil || len(ps) != 1 || ps[0].(TaskFired).Late {
		t.Fatalf("fire: %v %v", ps, err)
	}
	task.Apply(ps[0], 2, due)
	start, dup, err := task.StartDelivery()
	if err != nil || dup || start.Attempt != 1 {
		t.Fatalf("start: %+v %v %v", start, dup, err)
	}
	task.Apply(start, 3, due)
	if _, dup, _ := task.StartDelivery(); !dup {
		t.Fatal("an unsettled attempt must be reported")
	}
	task.Apply(TaskDeliveryFailed{ID: "t1", Occurrence: 1, Attempt: 1, Class: "blocked", Error: "blocked", Final: true}, 4, due)
	if task.Status != TaskStatusFailed || task.LastError != "blocked" {
		t.Fatalf("status %s %q", task.Status, task.LastError)
	}
	if _, ok := task.NextDue(); ok {
		t.Fatal("a failed task is not due")
	}
}
