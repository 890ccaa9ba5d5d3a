package httpapi

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/omega-gateway/omega/providers"
)

const anthropicVersion = "2023-06-01"

// Anthropic calls the Anthropic Messages API.
type Anthropic struct {
	api          httpAPI
	key          string
	baseURL      string
	defaultModel string
	maxTokens    int
}

// NewAnthropic returns an anthropic provider without retries.
func NewAnthropic(cfg providers.Config) *Anthropic {
	return &Anthropic{
		api:          newHTTPAPI(providers.NameAnthropic, cfg, cfg.AnthropicAPIKey),
		key:          cfg.AnthropicAPIKey,
		baseURL:      cmp.Or(cfg.AnthropicBaseURL, "https://api.anthropic.com"),
		defaultModel: cfg.ModelFast,
		maxTokens:    cmp.Or(cfg.MaxTokens, 8192),
	}
}

func (a *Anthropic) Name() string { return providers.NameAnthropic }

// Check reports whether a key and a usable base URL are configured.
func (a *Anthropic) Check(ctx context.Context) error {
	if a.key == "" {
		return &providers.Error{Class: providers.Unavailable, Provider: providers.NameAnthropic,
			Msg: "no API key: set OMEGA_ANTHROPIC_API_KEY"}
	}
	return checkBaseURL(providers.NameAnthropic, a.baseURL, "OMEGA_ANTHROPIC_BASE_URL")
}

type anthropicMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type anthropicRequest struct {
	Model     string             `json:"model"`
	MaxTokens int                `json:"max_tokens"`
	System    string             `json:"system,omitempty"`
	Messages  []anthropicMessage `json:"messages"`
	Stream    bool               `json:"stream,omitempty"`
}

type anthropicResponse struct {
	Model   string `json:"model"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StopReason string          `json:"stop_reason"`
	Usage      *anthropicUsage `json:"usage"`
}

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

func (a *Anthropic) request(req providers.Request) anthropicRequest {
	return anthropicRequest{
		Model:     cmp.Or(req.Model, a.defaultModel),
		MaxTokens: a.maxTokens,
		System:    req.System,
		Messages:  anthropicMessages(req),
	}
}

func (a *Anthropic) headers() map[string]string {
	return map[string]string{"x-api-key": a.key, "anthropic-version": anthropicVersion}
}

func (a *Anthropic) Complete(ctx context.Context, req providers.Request) (providers.Response, error) {
	if err := a.Check(ctx); err != nil {
		return providers.Response{}, err
	}
	start := time.Now()
	body := a.request(req)
	var out anthropicResponse
	if err := a.api.post(ctx, joinURL(a.baseURL, "/v1/messages"), req.Timeout, a.headers(), body, &out); err != nil {
		return providers.Response{}, err
	}
	return out.reply(body.Model, req, start)
}

// reply is the Response for a whole message.
func (out anthropicResponse) reply(model string, req providers.Request, start time.Time) (providers.Response, error) {
	var text strings.Builder
	for _, block := range out.Content {
		if block.Type == "text" {
			text.WriteString(block.Text)
		}
	}
	return anthropicReply(text.String(), cmp.Or(out.Model, model), out.StopReason, out.Usage, req, start)
}

func anthropicReply(text, model, stopReason string, u *anthropicUsage, req providers.Request, start time.Time) (providers.Response, error) {
	if text == "" {
		return providers.Response{}, &providers.Error{Class: providers.Malformed, Provider: providers.NameAnthropic,
			Msg: fmt.Sprintf("no text in reply (stop_reason %q)", stopReason)}
	}
	resp := providers.Response{
		Text:        text,
		Model:       model,
		Duration:    time.Since(start),
		NumTurns:    1,
		PromptBytes: promptBytes(req),
		ReplyBytes:  len(text),
	}
	if u != nil {
		// The API counts cached prompt tokens apart from input_tokens;
		// InputTokens is every prompt token, as for claude-code.
		resp.InputTokens = u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
		resp.OutputTokens = u.OutputTokens
		resp.CacheReadTokens, resp.CacheWriteTokens = u.CacheReadInputTokens, u.CacheCreationInputTokens
		resp.UsageReported = true
	}
	return resp, nil
}

// anthropicMessages maps the history and the prompt to API messages. Empty
// messages are dropped because the API rejects them.
func anthropicMessages(req providers.Request) []anthropicMessage {
	msgs := make([]anthropicMessage, 0, len(req.History)+1)
	for _, m := range req.History {
		if strings.TrimSpace(m.Content) == "" {
			continue
		}
		msgs = append(msgs, anthropicMessage{Role: apiRole(m.Role), Content: m.Content})
	}
	return append(msgs, anthropicMessage{Role: "user", Content: req.Prompt})
}

// apiRole maps a history role to user or assistant, the only two roles a
// conversation turn can have in both APIs.
func apiRole(role string) string {
	if strings.EqualFold(role, "assistant") {
		return "assistant"
	}
	return "user"
}

func promptBytes(req providers.Request) int {
	n := len(req.System) + len(req.Prompt)
	for _, m := range req.History {
		n += len(m.Content)
	}
	return n
}

func checkBaseURL(provider, base, envName string) error {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &providers.Error{Class: providers.Unavailable, Provider: provider,
			Msg: fmt.Sprintf("base URL is not an http(s) URL: set %s", envName)}
	}
	return nil
}
