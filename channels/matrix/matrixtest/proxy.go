package matrixtest

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"testing"
)

// Proxy stands between omega and the homeserver and misbehaves on
// request: it stalls (takes requests and answers nothing) or answers
// every request with an error status.
type Proxy struct {
	URL string

	mu      sync.Mutex
	mode    string
	status  int
	release chan struct{}
}

// Proxy modes.
const (
	modePass  = "pass"
	modeStall = "stall"
	modeFail  = "fail"
)

// NewProxy starts a proxy to d that passes requests through.
func (d *Dendrite) NewProxy(t *testing.T) *Proxy {
	t.Helper()
	target, err := url.Parse(d.URL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ErrorLog = log.New(io.Discard, "", 0)
	p := &Proxy{mode: modePass, release: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		mode, status, release := p.mode, p.status, p.release
		p.mu.Unlock()
		switch mode {
		case modeStall:
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		case modeFail:
			w.Header().Set("Content-Type", "application/json")
			if status == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(status)
				_, _ = w.Write([]byte(`{"errcode":"M_LIMIT_EXCEEDED","error":"Too many requests","retry_after_ms":1000}`))
				return
			}
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"errcode":"M_UNKNOWN","error":"proxy failure ` + strconv.Itoa(status) + `"}`))
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		p.mu.Lock()
		close(p.release)
		p.mode = modePass
		p.mu.Unlock()
		srv.Close()
	})
	p.URL = srv.URL
	return p
}

// Stall makes the proxy hold every request without answering.
func (p *Proxy) Stall() { p.set(modeStall, 0) }

// Fail makes the proxy answer every request with status.
func (p *Proxy) Fail(status int) { p.set(modeFail, status) }

// Pass makes the proxy pass new requests through again; requests it
// stalled stay unanswered until their clients give up, as on a dead
// connection.
func (p *Proxy) Pass() { p.set(modePass, 0) }

func (p *Proxy) set(mode string, status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode, p.status = mode, status
}
