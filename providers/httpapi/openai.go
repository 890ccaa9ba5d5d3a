package httpapi

import (
	"cmp"
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/omega-gateway/omega/providers"
)

// OpenAI calls any OpenAI-compatible chat completions API: OpenAI itself,
// or local servers such as Ollama, LM Studio and vLLM, which need no key.
type OpenAI struct {
	api          httpAPI
	key          string
	baseURL      string
	defaultModel string
}

// NewOpenAI returns an openai provider without retries.
func NewOpenAI(cfg providers.Config) *OpenAI {
	return &OpenAI{
		api:          newHTTPAPI(providers.NameOpenAI, cfg, cfg.OpenAIAPIKey),
		key:          cfg.OpenAIAPIKey,
		baseURL:      cmp.Or(cfg.OpenAIBaseURL, "https://api.openai.com/v1"),
		defaultModel: cfg.ModelFast,
	}
}

func (o *OpenAI) Name() string { return providers.NameOpenAI }

// Check reports whether the base URL is usable and, for api.openai.com,
// whether a key is set; local servers work without one.
func (o *OpenAI) Check(ctx context.Context) error {
	if err := checkBaseURL(providers.NameOpenAI, o.baseURL, "OMEGA_OPENAI_BASE_URL"); err != nil {
		return err
	}
	if u, _ := url.Parse(o.baseURL); o.key == "" && strings.EqualFold(u.Hostname(), "api.openai.com") {
		return &providers.Error{Class: providers.Unavailable, Provider: providers.NameOpenAI,
			Msg: "no API key: set OMEGA_OPENAI_API_KEY, or point OMEGA_OPENAI_BASE_URL at a local server"}
	}
	return nil
}

type openAIMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type openAIRequest struct {
	Model    string          `json:"model"`
	Messages []openAIMessage `json:"messages"`
}

type openAIResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *openAIUsage `json:"usage"`
}

type openAIUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func (o *OpenAI) headers() map[string]string {
	headers := map[string]string{}
	if o.key != "" {
		headers["Authorization"] = "Bearer " + o.key
	}
	return headers
}

func (o *OpenAI) Complete(ctx context.Context, req providers.Request) (providers.Response, error) {
	if err := o.Check(ctx); err != nil {
		return providers.Response{}, err
	}
	start := time.Now()
	body := openAIRequest{Model: cmp.Or(req.Model, o.defaultModel), Messages: openAIMessages(req)}
	var out openAIResponse
	if err := o.api.post(ctx, joinURL(o.baseURL, "/chat/completions"), req.Timeout, o.headers(), body, &out); err != nil {
		return providers.Response{}, err
	}
	return out.reply(body.Model, req, start)
}

// reply is the Response for a whole completion.
func (out openAIResponse) reply(model string, req providers.Request, start time.Time) (providers.Response, error) {
	if len(out.Choices) == 0 || out.Choices[0].Message.Content == nil {
		return openAIReply("", model, nil, req, start)
	}
	return openAIReply(*out.Choices[0].Message.Content, cmp.Or(out.Model, model), out.Usage, req, start)
}

func openAIReply(text, model string, u *openAIUsage, req providers.Request, start time.Time) (providers.Response, error) {
	if text == "" {
		return providers.Response{}, &providers.Error{Class: providers.Malformed, Provider: providers.NameOpenAI, Msg: "no message content in reply"}
	}
	resp := providers.Response{
		Text:        text,
		Model:       model,
		Duration:    time.Since(start),
		NumTurns:    1,
		PromptBytes: promptBytes(req),
		ReplyBytes:  len(text),
	}
	if u != nil { // local servers often report none
		resp.InputTokens, resp.OutputTokens = u.PromptTokens, u.CompletionTokens
		resp.CacheReadTokens = u.PromptTokensDetails.CachedTokens
		resp.UsageReported = true
	}
	return resp, nil
}

func openAIMessages(req providers.Request) []openAIMessage {
	msgs := make([]openAIMessage, 0, len(req.History)+2)
	if req.System != "" {
		msgs = append(msgs, openAIMessage{Role: "system", Content: req.System})
	}
	for _, m := range req.History {
		if strings.TrimSpace(m.Content) == "" {
			continue
		}
		msgs = append(msgs, openAIMessage{Role: apiRole(m.Role), Content: m.Content})
	}
	return append(msgs, openAIMessage{Role: "user", Content: req.Prompt})
}
