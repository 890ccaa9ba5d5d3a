// Package httpapi holds the providers that answer over HTTP: the
// Anthropic Messages API and any OpenAI-compatible chat completions
// server, with the plumbing they share (one JSON POST or one stream of
// server-sent events, failures classified, the key scrubbed from every
// message).
package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/omega-gateway/omega/providers"
)

const (
	defaultHTTPTimeout = 5 * time.Minute
	maxResponseBytes   = 16 << 20
	bodyExcerpt        = 300
)

// httpAPI is the JSON-over-HTTP plumbing shared by the API providers: one
// POST, with the failure classified and the key scrubbed from every message.
type httpAPI struct {
	name    string
	client  *http.Client
	timeout time.Duration
	secret  string // removed from any text that reaches an error
	now     func() time.Time
}

func newHTTPAPI(name string, cfg providers.Config, secret string) httpAPI {
	return httpAPI{
		name:    name,
		client:  &http.Client{},
		timeout: cmpDuration(cfg.Timeout, defaultHTTPTimeout),
		secret:  secret,
		now:     time.Now,
	}
}

// post sends body as JSON to url and decodes a 2xx answer into out.
func (h httpAPI) post(ctx context.Context, url string, timeout time.Duration, headers map[string]string, body, out any) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("%s: encode request: %w", h.name, err)
	}
	timeout = cmpDuration(timeout, h.timeout)
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	req, err := http.NewRequestWithContext(callCtx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return &providers.Error{Class: providers.Unavailable, Provider: h.name, Msg: "bad base URL", Err: h.scrubErr(err)}
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}

	resp, err := h.client.Do(req)
	if err != nil {
		return h.transportError(ctx, callCtx, timeout, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return h.transportError(ctx, callCtx, timeout, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return h.statusError(resp, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &providers.Error{Class: providers.Malformed, Provider: h.name, Status: resp.StatusCode,
			Msg: "undecodable response: " + h.scrub(providers.Excerpt(string(raw), bodyExcerpt)), Err: err}
	}
	return nil
}

func (h httpAPI) transportError(parent, callCtx context.Context, timeout time.Duration, err error) error {
	if parent.Err() != nil {
		return fmt.Errorf("%s: %w", h.name, parent.Err())
	}
	if errors.Is(callCtx.Err(), context.DeadlineExceeded) {
		return &providers.Error{Class: providers.Timeout, Provider: h.name,
			Msg: fmt.Sprintf("no reply within %s", timeout), Err: context.DeadlineExceeded}
	}
	// Connection refused, reset, DNS: usually transient, so Server (retried).
	return &providers.Error{Class: providers.Server, Provider: h.name, Msg: "transport", Err: h.scrubErr(err)}
}

func (h httpAPI) statusError(resp *http.Response, body []byte) error {
	e := &providers.Error{
		Class:    classOfStatus(resp.StatusCode),
		Status:   resp.StatusCode,
		Provider: h.name,
		Msg:      h.scrub(apiErrorMessage(body)),
	}
	if e.Class == providers.RateLimited || e.Class == providers.Server {
		e.RetryAfter = retryAfter(resp.Header, h.now())
	}
	return e
}

func classOfStatus(status int) providers.Class {
	switch {
	case status == http.StatusTooManyRequests:
		return providers.RateLimited
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return providers.Auth
	case status == http.StatusRequestTimeout:
		return providers.Timeout
	case status >= 500: // includes Anthropic's 529 "overloaded"
		return providers.Server
	case status == http.StatusBadRequest || status == http.StatusNotFound || status == http.StatusUnprocessableEntity:
		return providers.BadRequest
	default:
		return providers.Unknown
	}
}

// retryAfter reads retry-after-ms (OpenAI) or Retry-After in seconds or as
// an HTTP date. It returns 0 when there is no usable hint.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// apiErrorMessage extracts the message from the error bodies of Anthropic
// ({"error":{"type","message"}}), OpenAI ({"error":{"message"}}) and
// servers that send {"error":"text"}, falling back to a body excerpt.
func apiErrorMessage(body []byte) string {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && len(env.Error) > 0 {
		var obj struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		}
		if json.Unmarshal(env.Error, &obj) == nil && obj.Message != "" {
			if obj.Type != "" {
				return providers.Excerpt(obj.Type+": "+obj.Message, bodyExcerpt)
			}
			return providers.Excerpt(obj.Message, bodyExcerpt)
		}
		var s string
		if json.Unmarshal(env.Error, &s) == nil && s != "" {
			return providers.Excerpt(s, bodyExcerpt)
		}
	}
	return providers.Excerpt(string(body), bodyExcerpt)
}

func (h httpAPI) scrub(s string) string {
	if h.secret == "" {
		return s
	}
	return strings.ReplaceAll(s, h.secret, "[redacted]")
}

// scrubErr keeps the text of err free of the key while dropping its chain,
// which is only ever transport detail.
func (h httpAPI) scrubErr(err error) error {
	if h.secret == "" || !strings.Contains(err.Error(), h.secret) {
		return err
	}
	return errors.New(h.scrub(err.Error()))
}

func cmpDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// joinURL appends path to a base URL that may or may not end in a slash.
func joinURL(base, path string) string {
	return strings.TrimRight(base, "/") + path
}
