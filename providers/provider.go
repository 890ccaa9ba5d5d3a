// Package providers is the port to the LLMs that write omega's replies:
// what a request and a reply are, the Provider and Streamer interfaces,
// their configuration, classified errors and the retry wrapper. The
// providers themselves live in subpackages (claudecode, httpapi) and
// registry picks one from Config. Every failure is an *Error with a Class
// so callers can retry, fall back or tell the user something sensible
// without parsing strings.
package providers

import (
	"context"
	"strings"
	"time"
)

// Message is one earlier exchange in the conversation.
type Message struct {
	Role    string // "user" or "assistant"
	Content string
}

// Request is one completion request.
//
// HTTP providers send System and History as they are. claude-code folds
// System and History into the prompt when SessionID is empty, and sends only
// Prompt when resuming SessionID: the caller builds the minimal continuation
// prompt, because the CLI session already holds the rest.
type Request struct {
	System    string
	History   []Message
	Prompt    string
	Model     string // empty means the provider's fast model
	SessionID string // claude-code only: session to --resume
	// ForkSession (claude-code only) resumes a copy of SessionID
	// (--fork-session), leaving that session as it was.
	ForkSession bool
	MaxTurns    int           // claude-code only: 0 means the configured default
	WorkDir     string        // claude-code only: working directory of the CLI
	Timeout     time.Duration // 0 means the configured default
	// MCPServers are given to this call only (claude-code: --mcp-config
	// with a temporary file removed after the call); others ignore them.
	MCPServers []MCPServer
	// Agent (claude-code only) runs the named agent of the working
	// directory's .claude/agents (--agent); its file is the system
	// prompt, so System is not folded into the prompt. Other providers
	// take System as the agent's instructions.
	Agent string
}

// Response is a completed reply and what it cost.
type Response struct {
	Text      string
	SessionID string // claude-code only: the session to resume next time
	Model     string
	Duration  time.Duration
	NumTurns  int
	Resumes   int // claude-code only: automatic resumes after error_max_turns
	// Token counts and cost are as reported by the provider, summed over
	// resumes; UsageReported is false when it reported none (the zeros are
	// then unknown). InputTokens counts every prompt token, cache reads and
	// writes included; the cache fields break them out. CostUSD is only set
	// by providers that report a cost (claude-code): omega prices nothing.
	InputTokens      int
	OutputTokens     int
	CacheReadTokens  int
	CacheWriteTokens int
	CostUSD          float64
	UsageReported    bool
	PromptBytes      int // bytes of prompt text sent, summed over resumes
	ReplyBytes       int // bytes of Text
}

// Provider is an LLM backend.
type Provider interface {
	Name() string
	Complete(ctx context.Context, req Request) (Response, error)
	// Check reports whether the provider can work at all (binary present, key
	// set). Its error says what to install or set, and holds no secret.
	Check(ctx context.Context) error
}

// Provider names accepted in Config.Provider.
const (
	NameClaudeCode = "claude-code"
	NameAnthropic  = "anthropic"
	NameOpenAI     = "openai"
)

// withTools are the providers that act with tools (commands, files, the
// web) in a working directory; the HTTP APIs only write text.
var withTools = map[string]bool{NameClaudeCode: true}

// HasTools says whether the named provider acts with tools, so that the
// system prompt promises them (and the sandbox rules) only when it does.
func HasTools(name string) bool { return withTools[strings.ToLower(strings.TrimSpace(name))] }

// Config selects and configures the provider. Tags carry no OMEGA_ prefix:
// the application nests this struct with envPrefix:"OMEGA_".
type Config struct {
	// Provider is claude-code, anthropic or openai. Default claude-code.
	Provider string `env:"PROVIDER" envDefault:"claude-code"`
	// ClaudeBin is the Claude Code executable, a name on PATH or a path.
	// Default claude.
	ClaudeBin string `env:"CLAUDE_BIN" envDefault:"claude"`
	// Sandbox is none, workspace or readonly: what the Claude Code process
	// may do (permission flags) and what the system prompt tells the model.
	// Default workspace.
	Sandbox string `env:"SANDBOX" envDefault:"workspace"`
	// ClaudeMaxTurns is passed as --max-turns when a request sets none. The
	// seed leaves the number open; default 100, which lets real coding work
	// finish while auto-resume covers the rest.
	ClaudeMaxTurns int `env:"CLAUDE_MAX_TURNS" envDefault:"100"`
	// ClaudeMaxResumes bounds the automatic --resume after error_max_turns.
	// Default 5 (seed Phase 5).
	ClaudeMaxResumes int `env:"CLAUDE_MAX_RESUMES" envDefault:"5"`
	// ClaudeResumeBackoff is the first wait before an automatic resume; it
	// doubles each time (2s, 4s, 8s, 16s, 32s). Default 2s (seed Phase 5).
	ClaudeResumeBackoff time.Duration `env:"CLAUDE_RESUME_BACKOFF" envDefault:"2s"`
	// Timeout bounds one provider call when the request sets none. Default
	// 0: the provider's own default, 60m for claude-code (seed Phase 5: it may
	// work on a task for a long time) and 5m for the HTTP APIs.
	Timeout time.Duration `env:"PROVIDER_TIMEOUT"`
	// ModelFast is used for simple messages and when a request names no
	// model. Default claude-sonnet-4-6 (gateway spec); set it for openai.
	ModelFast string `env:"MODEL_FAST" envDefault:"claude-sonnet-4-6"`
	// ModelComplex is used for multi-step work. Default claude-opus-4-6.
	ModelComplex string `env:"MODEL_COMPLEX" envDefault:"claude-opus-4-6"`
	// MaxTokens is max_tokens for the HTTP APIs. Default 8192.
	MaxTokens int `env:"PROVIDER_MAX_TOKENS" envDefault:"8192"`
	// AnthropicAPIKey is required for the anthropic provider. No default.
	AnthropicAPIKey string `env:"ANTHROPIC_API_KEY"`
	// AnthropicBaseURL default https://api.anthropic.com.
	AnthropicBaseURL string `env:"ANTHROPIC_BASE_URL" envDefault:"https://api.anthropic.com"`
	// OpenAIAPIKey is optional: local servers such as Ollama need none.
	OpenAIAPIKey string `env:"OPENAI_API_KEY"`
	// OpenAIBaseURL default https://api.openai.com/v1.
	OpenAIBaseURL string `env:"OPENAI_BASE_URL" envDefault:"https://api.openai.com/v1"`
	// MaxRetries is how often a retryable failure is retried; 0 turns
	// retries off. Default 3.
	MaxRetries int `env:"PROVIDER_MAX_RETRIES" envDefault:"3"`
	// RetryBase is the first retry backoff; it doubles, with full jitter.
	// Default 1s.
	RetryBase time.Duration `env:"PROVIDER_RETRY_BASE" envDefault:"1s"`
}
