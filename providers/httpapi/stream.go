package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/omega-gateway/omega/providers"
)

// errStreamDone ends reading a stream at its final event, without waiting
// for the server to close the connection.
var errStreamDone = errors.New("stream done")

// stream POSTs body as JSON to url and hands a 2xx answer to read, which
// reads it as it arrives. A failure reading the body (the call's deadline,
// a cut connection, the caller's cancellation) is classified like a
// failure to connect, whatever read makes of the short body.
func (h httpAPI) stream(ctx context.Context, url string, timeout time.Duration, headers map[string]string, body any,
	read func(resp *http.Response, body io.Reader) error) error {
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
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
		if err != nil {
			return h.transportError(ctx, callCtx, timeout, err)
		}
		return h.statusError(resp, raw)
	}
	br := &bodyReader{r: io.LimitReader(resp.Body, maxResponseBytes)}
	err = read(resp, br)
	if br.err != nil {
		return h.transportError(ctx, callCtx, timeout, br.err)
	}
	var pe *providers.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pe):
		return err
	default: // an event line past maxResponseBytes
		return &providers.Error{Class: providers.Malformed, Provider: h.name, Msg: "unreadable reply stream", Err: err}
	}
}

// decodeWhole reads a whole JSON answer from a server that did not stream.
func (h httpAPI) decodeWhole(status int, body io.Reader, out any) error {
	raw, err := io.ReadAll(body)
	if err != nil {
		return err // the read failure itself is classified by stream
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &providers.Error{Class: providers.Malformed, Provider: h.name, Status: status,
			Msg: "undecodable response: " + h.scrub(providers.Excerpt(string(raw), bodyExcerpt)), Err: err}
	}
	return nil
}

// endedEarly is the error of a stream that closed before its final event:
// the server or the network to it failed halfway.
func (h httpAPI) endedEarly(final string) error {
	return &providers.Error{Class: providers.Server, Provider: h.name, Msg: "the reply stream ended before " + final}
}

// bodyReader remembers the first read failure other than the end of the
// body, so that a cut stream is told apart from a finished one.
type bodyReader struct {
	r   io.Reader
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && b.err == nil {
		b.err = err
	}
	return n, err
}

// isEventStream says whether a server answered with Server-Sent Events;
// one that ignores "stream" answers application/json.
func isEventStream(resp *http.Response) bool {
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}

// readSSE calls fn for each event of a text/event-stream body with its
// event name (empty when none) and its data lines joined by newlines. An
// error from fn stops the read and is returned, except errStreamDone,
// which ends it well.
func readSSE(r io.Reader, fn func(event, data string) error) error {
	err := scanSSE(r, fn)
	if errors.Is(err, errStreamDone) {
		return nil
	}
	return err
}

func scanSSE(r io.Reader, fn func(event, data string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxResponseBytes)
	var event string
	var data []string
	dispatch := func() error {
		if len(data) == 0 {
			event = ""
			return nil
		}
		err := fn(event, strings.Join(data, "\n"))
		event, data = "", nil
		return err
	}
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if err := dispatch(); err != nil {
				return err
			}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // a comment, often a keep-alive
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			event = value
		case "data":
			data = append(data, value)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	// Some servers end with a last event and no blank line after it.
	return dispatch()
}
