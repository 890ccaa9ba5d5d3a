package providers

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/omega-gateway/omega/internal/wait"
)

const (
	defaultClaudeTimeout = 60 * time.Minute
	// continuePrompt is what an automatic resume after error_max_turns sends.
	continuePrompt  = "Continue where you left off. Complete the remaining work."
	subtypeMaxTurns = "error_max_turns"
	// stderrExcerpt bounds how much process output an error quotes.
	stderrExcerpt = 500
)

// ClaudeCode runs the Claude Code CLI once per request (plus automatic
// resumes when it runs out of turns).
type ClaudeCode struct {
	bin           string
	maxTurns      int
	maxResumes    int
	resumeBackoff time.Duration
	timeout       time.Duration
	defaultModel  string
	sandbox       Sandbox
	sleep         func(ctx context.Context, d time.Duration) error
	logger        *slog.Logger
}

// NewClaudeCode returns a claude-code provider without retries.
func NewClaudeCode(cfg Config, logger *slog.Logger) *ClaudeCode {
	if logger == nil {
		logger = slog.Default()
	}
	c := &ClaudeCode{
		bin:           cmp.Or(cfg.ClaudeBin, "claude"),
		maxTurns:      cfg.ClaudeMaxTurns,
		maxResumes:    cfg.ClaudeMaxResumes,
		resumeBackoff: cfg.ClaudeResumeBackoff,
		timeout:       cfg.Timeout,
		defaultModel:  cfg.ModelFast,
		sandbox:       sandboxOrDefault(cfg.Sandbox),
		sleep:         wait.Sleep,
		logger:        logger,
	}
	if c.timeout <= 0 {
		c.timeout = defaultClaudeTimeout
	}
	if c.maxTurns <= 0 {
		c.maxTurns = 100
	}
	return c
}

func (c *ClaudeCode) Name() string { return NameClaudeCode }

// Check reports whether the CLI can be found.
func (c *ClaudeCode) Check(ctx context.Context) error {
	if _, err := exec.LookPath(c.bin); err != nil {
		return c.unavailable(err)
	}
	return nil
}

func (c *ClaudeCode) unavailable(err error) error {
	return &Error{Class: Unavailable, Provider: NameClaudeCode, Err: err,
		Msg: fmt.Sprintf("cannot run Claude Code CLI %q: install Claude Code (npm i -g @anthropic-ai/claude-code) or set OMEGA_CLAUDE_BIN to its path", c.bin)}
}

// Complete runs the CLI, resuming the same session after error_max_turns up
// to the configured number of times and joining the partial results, so a
// long task finishes without the user having to say "continue".
func (c *ClaudeCode) Complete(ctx context.Context, req Request) (Response, error) {
	start := time.Now()
	timeout := cmp.Or(req.Timeout, c.timeout)
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	model := cmp.Or(req.Model, c.defaultModel)
	inv, cleanup, err := c.invocation(req, model)
	if err != nil {
		return Response{}, err
	}
	defer cleanup()

	resp := Response{Model: model, SessionID: req.SessionID}
	var parts []string
	for {
		res, err := c.run(runCtx, inv)
		if err != nil {
			return Response{}, c.runError(ctx, runCtx, timeout, err)
		}
		resp.PromptBytes += len(inv.prompt)
		resp.NumTurns += res.NumTurns
		resp.InputTokens += res.Usage.input()
		resp.OutputTokens += res.Usage.OutputTokens
		resp.CacheReadTokens += res.Usage.CacheReadInputTokens
		resp.CacheWriteTokens += res.Usage.CacheCreationInputTokens
		resp.CostUSD += res.TotalCostUSD
		resp.UsageReported = resp.UsageReported || res.Usage != (cliUsage{}) || res.TotalCostUSD > 0
		if res.SessionID != "" {
			resp.SessionID = res.SessionID
		}
		if res.Model != "" {
			resp.Model = res.Model
		}
		if t := strings.TrimSpace(res.Result); t != "" {
			parts = append(parts, t)
		}
		c.logger.DebugContext(ctx, "claude-code run finished", "subtype", res.Subtype,
			"turns", res.NumTurns, "cost_usd", res.TotalCostUSD, "resume", resp.Resumes)

		if res.Subtype != subtypeMaxTurns || res.SessionID == "" || resp.Resumes >= c.maxResumes {
			break
		}
		wait := c.resumeBackoff << resp.Resumes
		c.logger.InfoContext(ctx, "claude-code hit max turns, resuming",
			"session", res.SessionID, "resume", resp.Resumes+1, "wait", wait)
		if err := c.sleep(runCtx, wait); err != nil {
			return Response{}, c.runError(ctx, runCtx, timeout, err)
		}
		resp.Resumes++
		inv.session = res.SessionID
		inv.prompt = continuePrompt
	}

	resp.Text = strings.Join(parts, "\n\n")
	resp.ReplyBytes = len(resp.Text)
	resp.Duration = time.Since(start)
	if resp.Text == "" {
		return Response{}, &Error{Class: Malformed, Provider: NameClaudeCode,
			Msg: fmt.Sprintf("empty reply after %d turns and %d resumes", resp.NumTurns, resp.Resumes)}
	}
	return resp, nil
}

// invocation is the CLI run a request asks for; cleanup removes its
// per-call MCP config file, if any.
func (c *ClaudeCode) invocation(req Request, model string) (invocation, func(), error) {
	inv := invocation{
		prompt:   req.Prompt,
		model:    model,
		session:  req.SessionID,
		fork:     req.ForkSession,
		maxTurns: req.MaxTurns,
		dir:      req.WorkDir,
		sandbox:  c.sandbox,
	}
	if inv.maxTurns <= 0 {
		inv.maxTurns = c.maxTurns
	}
	if req.SessionID == "" {
		inv.prompt = foldPrompt(req)
	}
	if len(req.MCPServers) > 0 {
		path, remove, err := writeMCPConfig(req.MCPServers)
		if err != nil {
			return invocation{}, nil, &Error{Class: Unavailable, Provider: NameClaudeCode, Msg: "cannot pass the skills' MCP servers", Err: err}
		}
		inv.mcpConfig = path
		return inv, remove, nil
	}
	return inv, func() {}, nil
}

// runError turns a failure during runCtx into a Timeout when our own
// deadline fired, and leaves the caller's cancellation as it is.
func (c *ClaudeCode) runError(parent, runCtx context.Context, timeout time.Duration, err error) error {
	if parent.Err() != nil {
		return fmt.Errorf("%s: %w", NameClaudeCode, parent.Err())
	}
	if errors.Is(runCtx.Err(), context.DeadlineExceeded) {
		return &Error{Class: Timeout, Provider: NameClaudeCode,
			Msg: fmt.Sprintf("no reply within %s", timeout), Err: context.DeadlineExceeded}
	}
	return err
}

type invocation struct {
	prompt, model, session string
	fork                   bool // --fork-session beside --resume
	maxTurns               int
	dir                    string
	sandbox                Sandbox
	mcpConfig              string // --mcp-config file of this call, if any
}

// args are the CLI's flags. The prompt is not among them: it goes on
// stdin (see run), because a command line is readable by every local user
// (ps, /proc/PID/cmdline) and the prompt carries the sender's facts and
// messages.
func (inv invocation) args() []string {
	args := []string{"-p", "--output-format", "json", "--model", inv.model}
	if inv.session != "" {
		args = append(args, "--resume", inv.session)
		if inv.fork {
			args = append(args, "--fork-session")
		}
	}
	args = append(args, "--max-turns", strconv.Itoa(inv.maxTurns))
	if inv.mcpConfig != "" {
		args = append(args, "--mcp-config", inv.mcpConfig)
	}
	return append(args, inv.sandbox.permissionArgs()...)
}

// run executes the CLI once and parses its result.
func (c *ClaudeCode) run(ctx context.Context, inv invocation) (cliResult, error) {
	cmd := exec.CommandContext(ctx, c.bin, inv.args()...)
	cmd.Dir = inv.dir
	cmd.Env = ChildEnv(os.Environ())
	// `claude -p` without a prompt argument reads the prompt from stdin.
	cmd.Stdin = strings.NewReader(inv.prompt)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	killGroupOnCancel(cmd)
	// Bounds the wait for pipes held open by stray grandchildren after kill.
	cmd.WaitDelay = 5 * time.Second

	if inv.dir != "" {
		if _, err := os.Stat(inv.dir); err != nil {
			return cliResult{}, &Error{Class: Unavailable, Provider: NameClaudeCode, Msg: "work dir", Err: err}
		}
	}
	runErr := cmd.Run()
	if runErr != nil && ctx.Err() != nil {
		return cliResult{}, ctx.Err()
	}
	if errors.Is(runErr, exec.ErrNotFound) || errors.Is(runErr, fs.ErrNotExist) || errors.Is(runErr, fs.ErrPermission) {
		return cliResult{}, c.unavailable(runErr)
	}
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		return cliResult{}, &Error{Class: Unavailable, Provider: NameClaudeCode,
			Msg: fmt.Sprintf("start %s in %q", c.bin, inv.dir), Err: runErr}
	}

	res, perr := parseCLIResult(stdout.Bytes())
	if perr != nil {
		if exitErr != nil {
			// The CLI died before printing a result: its stderr says why.
			return cliResult{}, &Error{Class: Server, Provider: NameClaudeCode,
				Status: exitErr.ExitCode(), Msg: "exited without a result: " + excerpt(stderr.String(), stderrExcerpt)}
		}
		return cliResult{}, &Error{Class: Malformed, Provider: NameClaudeCode,
			Msg: "unparseable output: " + excerpt(stdout.String(), stderrExcerpt), Err: perr}
	}
	if res.IsError && res.Subtype != subtypeMaxTurns {
		status := 0
		if exitErr != nil {
			status = exitErr.ExitCode()
		}
		detail := cmp.Or(res.Result, stderr.String())
		return cliResult{}, &Error{Class: classifyCLIText(detail), Provider: NameClaudeCode, Status: status,
			Msg: fmt.Sprintf("%s: %s", cmp.Or(res.Subtype, "error"), excerpt(detail, stderrExcerpt))}
	}
	return res, nil
}

// cliResult is the final JSON object of `claude -p --output-format json`.
type cliResult struct {
	Type         string   `json:"type"`
	Subtype      string   `json:"subtype"`
	IsError      bool     `json:"is_error"`
	Result       string   `json:"result"`
	SessionID    string   `json:"session_id"`
	NumTurns     int      `json:"num_turns"`
	Model        string   `json:"model"`
	Usage        cliUsage `json:"usage"`
	TotalCostUSD float64  `json:"total_cost_usd"`
	DurationMS   int64    `json:"duration_ms"`
}

type cliUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// input counts cached prompt tokens too: they are part of what was read.
func (u cliUsage) input() int {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// parseCLIResult accepts the single result object, and also the array of
// all messages that newer CLIs print with --verbose.
func parseCLIResult(out []byte) (cliResult, error) {
	out = bytes.TrimSpace(out)
	if len(out) > 0 && out[0] == '[' {
		var msgs []json.RawMessage
		if err := json.Unmarshal(out, &msgs); err != nil {
			return cliResult{}, fmt.Errorf("decode message array: %w", err)
		}
		for i := len(msgs) - 1; i >= 0; i-- {
			var res cliResult
			if json.Unmarshal(msgs[i], &res) == nil && res.Type == "result" {
				return res, nil
			}
		}
		return cliResult{}, errors.New("no result message in array")
	}
	var res cliResult
	if err := json.Unmarshal(out, &res); err != nil {
		return cliResult{}, fmt.Errorf("decode result: %w", err)
	}
	if res.Type != "result" {
		return cliResult{}, fmt.Errorf("unexpected message type %q", res.Type)
	}
	return res, nil
}

// classifyCLIText guesses the class of an error the CLI reported as text;
// it relays API failures as messages such as "API Error: 429 ...".
func classifyCLIText(s string) Class {
	l := strings.ToLower(s)
	switch {
	case strings.Contains(l, "rate limit") || strings.Contains(l, "429") || strings.Contains(l, "usage limit"):
		return RateLimited
	case strings.Contains(l, "401") || strings.Contains(l, "403") || strings.Contains(l, "api key") ||
		strings.Contains(l, "authenticat") || strings.Contains(l, "/login"):
		return Auth
	default:
		return Server
	}
}

// foldPrompt puts the system prompt and the history in front of the user's
// message, for a fresh CLI session that knows nothing yet.
func foldPrompt(req Request) string {
	var b strings.Builder
	if s := strings.TrimSpace(req.System); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	if len(req.History) > 0 {
		b.WriteString("Conversation so far:\n")
		for _, m := range req.History {
			fmt.Fprintf(&b, "[%s]: %s\n", roleLabel(m.Role), m.Content)
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		return req.Prompt
	}
	b.WriteString("[User]: ")
	b.WriteString(req.Prompt)
	return b.String()
}

func roleLabel(role string) string {
	if strings.EqualFold(role, "assistant") {
		return "Assistant"
	}
	return "User"
}

// sandboxOrDefault reads a validated mode; config rejects anything else
// before a provider is built.
func sandboxOrDefault(s string) Sandbox {
	m, err := ParseSandbox(s)
	if err != nil {
		return SandboxWorkspace
	}
	return m
}
