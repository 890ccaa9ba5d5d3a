package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/omega-gateway/omega/providers"
)

type openAIStreamRequest struct {
	openAIRequest
	Stream        bool                 `json:"stream"`
	StreamOptions *openAIStreamOptions `json:"stream_options,omitempty"`
}

type openAIStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Stream asks for server-sent events with the usage in a last chunk and
// reports each content delta as it arrives. A server that answers a whole
// completion instead is reported as one delta; one that refuses
// stream_options is asked once more without it (and reports no usage).
func (o *OpenAI) Stream(ctx context.Context, req providers.Request, onDelta func(providers.Delta)) (providers.Response, error) {
	if err := o.Check(ctx); err != nil {
		return providers.Response{}, err
	}
	if onDelta == nil {
		onDelta = func(providers.Delta) {}
	}
	body := openAIStreamRequest{
		openAIRequest: openAIRequest{Model: cmp.Or(req.Model, o.defaultModel), Messages: openAIMessages(req)},
		Stream:        true,
		StreamOptions: &openAIStreamOptions{IncludeUsage: true},
	}
	resp, err := o.stream(ctx, req, body, onDelta)
	if refusesStreamOptions(err) {
		body.StreamOptions = nil
		resp, err = o.stream(ctx, req, body, onDelta)
	}
	return resp, err
}

// refusesStreamOptions says whether a server rejected the request for its
// stream_options, as servers that predate the field do. Nothing was
// reported then: the refusal comes before any delta.
func refusesStreamOptions(err error) bool {
	var pe *providers.Error
	return errors.As(err, &pe) && pe.Class == providers.BadRequest && strings.Contains(strings.ToLower(pe.Msg), "stream_options")
}

func (o *OpenAI) stream(ctx context.Context, req providers.Request, body openAIStreamRequest, onDelta func(providers.Delta)) (providers.Response, error) {
	start := time.Now()
	var resp providers.Response
	err := o.api.stream(ctx, joinURL(o.baseURL, "/chat/completions"), req.Timeout, o.headers(), body,
		func(hr *http.Response, r io.Reader) error {
			var err error
			if !isEventStream(hr) {
				var out openAIResponse
				if err := o.api.decodeWhole(hr.StatusCode, r, &out); err != nil {
					return err
				}
				resp, err = out.reply(body.Model, req, start)
				if err == nil {
					onDelta(providers.Delta{Text: resp.Text})
				}
				return err
			}
			s := openAIStream{emit: onDelta, model: body.Model}
			if err := readSSE(r, s.event); err != nil {
				return err
			}
			// Some servers close without [DONE] after the last chunk; a
			// finish reason says the reply is whole all the same.
			if !s.done && s.finishReason == "" {
				return o.api.endedEarly("[DONE]")
			}
			resp, err = openAIReply(s.text.String(), s.model, s.usage, req, start)
			return err
		})
	if err != nil {
		return providers.Response{}, err
	}
	return resp, nil
}

// openAIStream gathers the chunks of one streamed completion.
type openAIStream struct {
	emit         func(providers.Delta)
	text         strings.Builder
	model        string
	finishReason string
	usage        *openAIUsage
	done         bool
}

type openAIChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *openAIUsage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

func (s *openAIStream) event(_, data string) error {
	if strings.TrimSpace(data) == "[DONE]" {
		s.done = true
		return errStreamDone
	}
	var c openAIChunk
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		return &providers.Error{Class: providers.Malformed, Provider: providers.NameOpenAI,
			Msg: "undecodable chunk: " + providers.Excerpt(data, bodyExcerpt), Err: err}
	}
	if c.Error != nil {
		class := providers.Server
		if strings.Contains(c.Error.Type, "rate_limit") {
			class = providers.RateLimited
		}
		return &providers.Error{Class: class, Provider: providers.NameOpenAI, Msg: providers.Excerpt(cmp.Or(c.Error.Message, c.Error.Type), bodyExcerpt)}
	}
	s.model = cmp.Or(c.Model, s.model)
	if c.Usage != nil {
		s.usage = c.Usage
	}
	if len(c.Choices) == 0 {
		return nil
	}
	ch := c.Choices[0]
	if ch.Delta.Content != "" {
		s.text.WriteString(ch.Delta.Content)
		s.emit(providers.Delta{Text: ch.Delta.Content})
	}
	if ch.FinishReason != nil {
		s.finishReason = cmp.Or(*ch.FinishReason, s.finishReason)
	}
	return nil
}

var _ providers.Streamer = (*OpenAI)(nil)
