package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/omega-gateway/omega/providers"
)

// Stream asks the Messages API for server-sent events and reports each
// text delta as it arrives. A server that answers a whole message instead
// is reported as one delta.
func (a *Anthropic) Stream(ctx context.Context, req providers.Request, onDelta func(providers.Delta)) (providers.Response, error) {
	if err := a.Check(ctx); err != nil {
		return providers.Response{}, err
	}
	if onDelta == nil {
		onDelta = func(providers.Delta) {}
	}
	start := time.Now()
	body := a.request(req)
	body.Stream = true
	var resp providers.Response
	err := a.api.stream(ctx, joinURL(a.baseURL, "/v1/messages"), req.Timeout, a.headers(), body,
		func(hr *http.Response, r io.Reader) error {
			var err error
			if !isEventStream(hr) {
				var out anthropicResponse
				if err := a.api.decodeWhole(hr.StatusCode, r, &out); err != nil {
					return err
				}
				resp, err = out.reply(body.Model, req, start)
				if err == nil {
					onDelta(providers.Delta{Text: resp.Text})
				}
				return err
			}
			s := anthropicStream{emit: onDelta, model: body.Model}
			if err := readSSE(r, s.event); err != nil {
				return err
			}
			if !s.done {
				return a.api.endedEarly("message_stop")
			}
			resp, err = anthropicReply(s.text.String(), s.model, s.stopReason, s.usage, req, start)
			return err
		})
	if err != nil {
		return providers.Response{}, err
	}
	return resp, nil
}

// anthropicStream gathers the events of one streamed message.
type anthropicStream struct {
	emit       func(providers.Delta)
	text       strings.Builder
	model      string
	stopReason string
	usage      *anthropicUsage
	done       bool
}

type anthropicEvent struct {
	Type    string `json:"type"`
	Message struct {
		Model string          `json:"model"`
		Usage *anthropicUsage `json:"usage"`
	} `json:"message"`
	Delta struct {
		Type       string `json:"type"`
		Text       string `json:"text"`
		StopReason string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anthropicUsage `json:"usage"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func (s *anthropicStream) event(name, data string) error {
	var ev anthropicEvent
	if err := json.Unmarshal([]byte(data), &ev); err != nil {
		return &providers.Error{Class: providers.Malformed, Provider: providers.NameAnthropic,
			Msg: "undecodable event: " + providers.Excerpt(data, bodyExcerpt), Err: err}
	}
	switch cmp.Or(ev.Type, name) {
	case "message_start":
		s.model = cmp.Or(ev.Message.Model, s.model)
		if ev.Message.Usage != nil {
			u := *ev.Message.Usage
			s.usage = &u
		}
	case "content_block_delta":
		if ev.Delta.Type == "text_delta" && ev.Delta.Text != "" {
			s.text.WriteString(ev.Delta.Text)
			s.emit(providers.Delta{Text: ev.Delta.Text})
		}
	case "message_delta":
		s.stopReason = cmp.Or(ev.Delta.StopReason, s.stopReason)
		s.addUsage(ev.Usage)
	case "message_stop":
		s.done = true
		return errStreamDone
	case "error":
		return &providers.Error{Class: anthropicErrorClass(ev.Error.Type), Provider: providers.NameAnthropic,
			Msg: providers.Excerpt(ev.Error.Type+": "+ev.Error.Message, bodyExcerpt)}
	}
	return nil
}

// addUsage takes message_delta's counts, which are cumulative: the output
// so far and, on newer API versions, the prompt counts again.
func (s *anthropicStream) addUsage(u *anthropicUsage) {
	if u == nil {
		return
	}
	if s.usage == nil {
		s.usage = &anthropicUsage{}
	}
	s.usage.OutputTokens = u.OutputTokens
	if u.InputTokens > 0 {
		s.usage.InputTokens = u.InputTokens
	}
	if u.CacheCreationInputTokens > 0 {
		s.usage.CacheCreationInputTokens = u.CacheCreationInputTokens
	}
	if u.CacheReadInputTokens > 0 {
		s.usage.CacheReadInputTokens = u.CacheReadInputTokens
	}
}

// anthropicErrorClass maps the error types the API sends in a stream's
// error event, where there is no HTTP status to go by.
func anthropicErrorClass(typ string) providers.Class {
	switch typ {
	case "rate_limit_error":
		return providers.RateLimited
	case "authentication_error", "permission_error":
		return providers.Auth
	case "invalid_request_error", "not_found_error", "request_too_large":
		return providers.BadRequest
	case "timeout_error":
		return providers.Timeout
	default: // overloaded_error, api_error and whatever comes next
		return providers.Server
	}
}

var _ providers.Streamer = (*Anthropic)(nil)
