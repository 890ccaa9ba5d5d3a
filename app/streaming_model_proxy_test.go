package app_test

import (
	"bytes"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// modelCalls are the requests a provider made to a model double, with
// when the last byte of each answer came: the double's own timers drift
// (a streamed reply of 120 words ends tens of milliseconds after its
// plan), so the time omega adds is measured from there.
type modelCalls struct {
	mu    sync.Mutex
	calls []*modelCall
}

type modelCall struct {
	body string
	end  time.Time
}

// proxyModel starts a proxy in front of the model double at target that
// passes every answer on as it comes and notes its end; it returns the
// proxy's base URL.
func proxyModel(tb testing.TB, target string) (*modelCalls, string) {
	m := &modelCalls{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		call := &modelCall{body: string(body)}
		m.mu.Lock()
		m.calls = append(m.calls, call)
		m.mu.Unlock()
		req, err := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.Path, bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		maps.Copy(w.Header(), resp.Header)
		w.WriteHeader(resp.StatusCode)
		m.relay(w, resp.Body, call)
	}))
	tb.Cleanup(srv.Close)
	return m, srv.URL
}

// relay copies an answer to w, flushing every piece, and notes when its
// last byte came.
func (m *modelCalls) relay(w http.ResponseWriter, body io.Reader, call *modelCall) {
	f, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			at := time.Now()
			_, _ = w.Write(buf[:n])
			if f != nil {
				f.Flush()
			}
			m.mu.Lock()
			call.end = at
			m.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// endOf is when the answer to the first request that carried text ended.
func (m *modelCalls) endOf(text string) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.calls {
		if strings.Contains(c.body, text) {
			return c.end, !c.end.IsZero()
		}
	}
	return time.Time{}, false
}
