// Package transcribe turns voice messages into text through an
// OpenAI-compatible /audio/transcriptions endpoint.
package transcribe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
)

// Client calls an OpenAI-compatible /audio/transcriptions endpoint.
type Client struct {
	url    string // full endpoint URL
	apiKey string
	model  string
	client *http.Client
}

// New returns a client of the API at baseURL (its /audio/transcriptions
// endpoint), authenticated by apiKey when it is set.
func New(baseURL, apiKey, model string, client *http.Client) (*Client, error) {
	if baseURL == "" || model == "" || client == nil {
		return nil, fmt.Errorf("transcribe: base URL %q, model %q and an HTTP client are required", baseURL, model)
	}
	return &Client{url: strings.TrimRight(baseURL, "/") + "/audio/transcriptions", apiKey: apiKey, model: model, client: client}, nil
}

// Transcribe returns the text spoken in audio, a file named name.
func (t *Client) Transcribe(ctx context.Context, name string, audio []byte) (string, error) {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	if err := w.WriteField("model", t.model); err != nil {
		return "", fmt.Errorf("transcription form: %w", err)
	}
	part, err := w.CreateFormFile("file", name)
	if err != nil {
		return "", fmt.Errorf("transcription form: %w", err)
	}
	if _, err := part.Write(audio); err != nil {
		return "", fmt.Errorf("transcription form: %w", err)
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("transcription form: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, &body)
	if err != nil {
		return "", fmt.Errorf("transcription request: %w", err)
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	if t.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+t.apiKey)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("transcription: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("transcription response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("transcription: status %d: %s", resp.StatusCode, snippet(raw))
	}
	var out struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", fmt.Errorf("decode transcription: %w", err)
	}
	text := strings.TrimSpace(out.Text)
	if text == "" {
		return "", fmt.Errorf("transcription: empty text")
	}
	return text, nil
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
