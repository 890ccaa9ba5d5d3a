package telegramtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A stopped server refuses connections and drops a pending long poll;
// restarted, it answers on the same URL with the updates pushed meanwhile.
func TestStopAndRestartKeepTheAddressAndTheUpdates(t *testing.T) {
	s := New(t, token)
	polled := make(chan error, 1)
	go func() {
		resp, err := http.Post(s.URL+"/bot"+token+"/getUpdates", "application/json", strings.NewReader(`{"timeout":5}`))
		if err == nil {
			resp.Body.Close()
		}
		polled <- err
	}()
	waitPolls(t, s, 1)
	s.Stop()
	select {
	case err := <-polled:
		if err == nil {
			t.Fatal("the pending long poll was answered, want the connection dropped")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the pending long poll outlived Stop")
	}
	if resp, err := http.Post(s.URL+"/bot"+token+"/getMe", "application/json", strings.NewReader(`{}`)); err == nil {
		resp.Body.Close()
		t.Fatal("a stopped server accepted a connection")
	}
	id := s.PushText(1, 1, "sent while down")
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	_, e := call(t, s.URL+"/bot"+token+"/getUpdates", `{"offset":0}`)
	var ups []struct {
		UpdateID int64 `json:"update_id"`
	}
	if err := json.Unmarshal(e.Result, &ups); err != nil || len(ups) != 1 || ups[0].UpdateID != id {
		t.Fatalf("updates after the restart = %s (%v)", e.Result, err)
	}
	if got := len(s.PollsSince(time.Time{})); got != 2 {
		t.Fatalf("%d polls recorded, want 2", got)
	}
}

func waitPolls(t *testing.T, s *Server, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(s.PollsSince(time.Time{})) < n {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d polls arrived", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
