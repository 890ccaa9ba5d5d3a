// Package claudecode is the provider that runs the Claude Code CLI: its
// process group and environment, the sandbox's permission flags, the
// per-call MCP config file, the stream-json output read as it is written,
// and the automatic resume after the CLI runs out of turns.
package claudecode

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/omega-gateway/omega/internal/wait"
	"github.com/omega-gateway/omega/providers"
)

const (
	defaultClaudeTimeout = 60 * time.Minute
	// continuePrompt is what an automatic resume after error_max_turns sends.
	continuePrompt  = "Continue where you left off. Complete the remaining work."
	subtypeMaxTurns = "error_max_turns"
	// stderrExcerpt bounds how much process output an error quotes.
	stderrExcerpt = 500
	// maxLineBytes bounds one line of CLI output that is read; longer
	// lines are only ever tool results.
	maxLineBytes = 16 << 20
)

// Provider runs the Claude Code CLI once per request (plus automatic
// resumes when it runs out of turns).
type Provider struct {
	bin           string
	maxTurns      int
	maxResumes    int
	resumeBackoff time.Duration
	timeout       time.Duration
	defaultModel  string
	sandbox       providers.Sandbox
	sleep         func(ctx context.Context, d time.Duration) error
	logger        *slog.Logger
	// noPartial is set once the CLI refused --include-partial-messages.
	noPartial atomic.Bool
}

// New returns a claude-code provider without retries.
func New(cfg providers.Config, logger *slog.Logger) *Provider {
	if logger == nil {
		logger = slog.Default()
	}
	c := &Provider{
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

func (c *Provider) Name() string { return providers.NameClaudeCode }

// Check reports whether the CLI can be found.
func (c *Provider) Check(ctx context.Context) error {
	if _, err := exec.LookPath(c.bin); err != nil {
		return c.unavailable(err)
	}
	return nil
}

func (c *Provider) unavailable(err error) error {
	return &providers.Error{Class: providers.Unavailable, Provider: providers.NameClaudeCode, Err: err,
		Msg: fmt.Sprintf("cannot run Claude Code CLI %q: install Claude Code (npm i -g @anthropic-ai/claude-code) or set OMEGA_CLAUDE_BIN to its path", c.bin)}
}

// Complete runs the CLI and returns its whole reply; see Stream.
func (c *Provider) Complete(ctx context.Context, req providers.Request) (providers.Response, error) {
	return c.Stream(ctx, req, nil)
}

// Stream runs the CLI, reporting its text and tool uses as it works, and
// resumes the same session after error_max_turns up to the configured
// number of times, joining the partial results, so a long task finishes
// without the user having to say "continue". Text reported before a tool
// use is the agent's narration of its work: the reply (Response.Text) is
// the CLI's result, the text after its last tool use.
func (c *Provider) Stream(ctx context.Context, req providers.Request, onDelta func(providers.Delta)) (providers.Response, error) {
	start := time.Now()
	timeout := cmp.Or(req.Timeout, c.timeout)
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if onDelta == nil {
		onDelta = func(providers.Delta) {}
	}

	model := cmp.Or(req.Model, c.defaultModel)
	inv, cleanup, err := c.invocation(req, model)
	if err != nil {
		return providers.Response{}, err
	}
	defer cleanup()

	resp := providers.Response{Model: model, SessionID: req.SessionID}
	var parts []string
	for {
		prefix := ""
		if len(parts) > 0 {
			prefix = "\n\n"
		}
		res, err := c.runPartial(runCtx, &inv, onDelta, prefix)
		if err != nil {
			return providers.Response{}, c.runError(ctx, runCtx, timeout, err)
		}
		addRun(&resp, res, len(inv.prompt))
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
			return providers.Response{}, c.runError(ctx, runCtx, timeout, err)
		}
		resp.Resumes++
		inv.session = res.SessionID
		inv.prompt = continuePrompt
	}

	resp.Text = strings.Join(parts, "\n\n")
	resp.ReplyBytes = len(resp.Text)
	resp.Duration = time.Since(start)
	if resp.Text == "" {
		return providers.Response{}, &providers.Error{Class: providers.Malformed, Provider: providers.NameClaudeCode,
			Msg: fmt.Sprintf("empty reply after %d turns and %d resumes", resp.NumTurns, resp.Resumes)}
	}
	return resp, nil
}

// runPartial runs the CLI once with partial messages, and again without
// them when the CLI is too old to know the flag (remembered for later
// calls). It printed nothing the first time, so nothing is reported twice.
func (c *Provider) runPartial(ctx context.Context, inv *invocation, onDelta func(providers.Delta), prefix string) (cliResult, error) {
	inv.partial = !c.noPartial.Load()
	res, err := c.run(ctx, *inv, newCLIStream(onDelta, prefix))
	if !errors.Is(err, errPartialUnsupported) {
		return res, err
	}
	c.noPartial.Store(true)
	c.logger.WarnContext(ctx, "claude-code does not stream partial messages; update Claude Code for live replies")
	inv.partial = false
	return c.run(ctx, *inv, newCLIStream(onDelta, prefix))
}

// addRun sums what one run reported into r.
func addRun(r *providers.Response, res cliResult, promptBytes int) {
	r.PromptBytes += promptBytes
	r.NumTurns += res.NumTurns
	r.InputTokens += res.Usage.input()
	r.OutputTokens += res.Usage.OutputTokens
	r.CacheReadTokens += res.Usage.CacheReadInputTokens
	r.CacheWriteTokens += res.Usage.CacheCreationInputTokens
	r.CostUSD += res.TotalCostUSD
	r.UsageReported = r.UsageReported || res.Usage != (cliUsage{}) || res.TotalCostUSD > 0
	if res.SessionID != "" {
		r.SessionID = res.SessionID
	}
	if res.Model != "" {
		r.Model = res.Model
	}
}

// invocation is the CLI run a request asks for; cleanup removes its
// per-call MCP config file, if any.
func (c *Provider) invocation(req providers.Request, model string) (invocation, func(), error) {
	inv := invocation{
		prompt:   req.Prompt,
		model:    model,
		session:  req.SessionID,
		fork:     req.ForkSession,
		maxTurns: req.MaxTurns,
		dir:      req.WorkDir,
		sandbox:  c.sandbox,
		agent:    req.Agent,
	}
	if inv.maxTurns <= 0 {
		inv.maxTurns = c.maxTurns
	}
	if req.Agent != "" {
		req.System = "" // the agent's file is its system prompt
	}
	if req.SessionID == "" {
		inv.prompt = foldPrompt(req)
	}
	if len(req.MCPServers) > 0 {
		path, remove, err := writeMCPConfig(req.MCPServers)
		if err != nil {
			return invocation{}, nil, &providers.Error{Class: providers.Unavailable, Provider: providers.NameClaudeCode, Msg: "cannot pass the skills' MCP servers", Err: err}
		}
		inv.mcpConfig = path
		return inv, remove, nil
	}
	return inv, func() {}, nil
}

// runError turns a failure during runCtx into a Timeout when our own
// deadline fired, and leaves the caller's cancellation as it is.
func (c *Provider) runError(parent, runCtx context.Context, timeout time.Duration, err error) error {
	if parent.Err() != nil {
		return fmt.Errorf("%s: %w", providers.NameClaudeCode, parent.Err())
	}
	if errors.Is(runCtx.Err(), context.DeadlineExceeded) {
		return &providers.Error{Class: providers.Timeout, Provider: providers.NameClaudeCode,
			Msg: fmt.Sprintf("no reply within %s", timeout), Err: context.DeadlineExceeded}
	}
	return err
}

type invocation struct {
	prompt, model, session string
	fork                   bool // --fork-session beside --resume
	maxTurns               int
	dir                    string
	sandbox                providers.Sandbox
	mcpConfig              string // --mcp-config file of this call, if any
	agent                  string // --agent of the working directory's .claude/agents
	partial                bool   // --include-partial-messages: text as it is written
}

// args are the CLI's flags. The prompt is not among them: it goes on
// stdin (see run), because a command line is readable by every local user
// (ps, /proc/PID/cmdline) and the prompt carries the sender's facts and
// messages.
func (inv invocation) args() []string {
	args := []string{"-p", "--output-format", "stream-json", "--verbose"}
	if inv.partial {
		args = append(args, "--include-partial-messages")
	}
	args = append(args, "--model", inv.model)
	if inv.session != "" {
		args = append(args, "--resume", inv.session)
		if inv.fork {
			args = append(args, "--fork-session")
		}
	}
	args = append(args, "--max-turns", strconv.Itoa(inv.maxTurns))
	if inv.agent != "" {
		args = append(args, "--agent", inv.agent)
	}
	if inv.mcpConfig != "" {
		args = append(args, "--mcp-config", inv.mcpConfig)
	}
	return append(args, permissionArgs(inv.sandbox)...)
}

// foldPrompt puts the system prompt and the history in front of the user's
// message, for a fresh CLI session that knows nothing yet.
func foldPrompt(req providers.Request) string {
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
func sandboxOrDefault(s string) providers.Sandbox {
	m, err := providers.ParseSandbox(s)
	if err != nil {
		return providers.SandboxWorkspace
	}
	return m
}
