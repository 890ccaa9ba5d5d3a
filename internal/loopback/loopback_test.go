package loopback

import (
	"io"
	"net/http"
	"testing"
)

func TestStopAndStartKeepTheAddress(t *testing.T) {
	s := New(t, "double", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "up") }))
	get := func() error {
		resp, err := http.Get(s.URL())
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	s.Stop()
	if get() == nil {
		t.Fatal("a stopped server answered")
	}
	s.Start()
	if err := get(); err != nil {
		t.Fatalf("after Start: %v", err)
	}
}
