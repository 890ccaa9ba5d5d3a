package claudecode

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/omega-gateway/omega/providers"
)

// errPartialUnsupported says the CLI refused --include-partial-messages,
// which older versions do not know; the run is repeated without it.
var errPartialUnsupported = errors.New("the CLI does not know --include-partial-messages")

// run executes the CLI once, feeding its output to stream line by line as
// it is written, and returns the final result.
func (c *Provider) run(ctx context.Context, inv invocation, stream *cliStream) (cliResult, error) {
	if inv.dir != "" {
		if _, err := os.Stat(inv.dir); err != nil {
			return cliResult{}, &providers.Error{Class: providers.Unavailable, Provider: providers.NameClaudeCode, Msg: "work dir", Err: err}
		}
	}
	cmd := exec.CommandContext(ctx, c.bin, inv.args()...)
	cmd.Dir = inv.dir
	cmd.Env = ChildEnv(os.Environ())
	// `claude -p` without a prompt argument reads the prompt from stdin.
	cmd.Stdin = strings.NewReader(inv.prompt)
	lines := make(chan []byte, 64)
	stdout := &lineWriter{lines: lines}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	killGroupOnCancel(cmd)
	// Bounds the wait for pipes held open by stray grandchildren after kill.
	cmd.WaitDelay = 5 * time.Second

	// The process runs in another goroutine so that the deltas are reported
	// from this one, as Streamer promises.
	done := make(chan error, 1)
	go func() {
		err := cmd.Run()
		stdout.flush()
		close(lines)
		done <- err
	}()
	for line := range lines {
		stream.line(line)
	}
	runErr := <-done

	if runErr != nil && ctx.Err() != nil {
		return cliResult{}, ctx.Err()
	}
	exitErr, err := c.startError(inv, runErr)
	if err != nil {
		return cliResult{}, err
	}
	return c.outcome(inv, stream, exitErr, stderr.String())
}

// startError reports a CLI that could not be started; an exit with a
// status is returned as exitErr for outcome to judge.
func (c *Provider) startError(inv invocation, runErr error) (*exec.ExitError, error) {
	if runErr == nil {
		return nil, nil
	}
	if errors.Is(runErr, exec.ErrNotFound) || errors.Is(runErr, fs.ErrNotExist) || errors.Is(runErr, fs.ErrPermission) {
		return nil, c.unavailable(runErr)
	}
	var exitErr *exec.ExitError
	if !errors.As(runErr, &exitErr) {
		return nil, &providers.Error{Class: providers.Unavailable, Provider: providers.NameClaudeCode,
			Msg: fmt.Sprintf("start %s in %q", c.bin, inv.dir), Err: runErr}
	}
	return exitErr, nil
}

// outcome judges a finished run by its result, or by its stderr when it
// printed none.
func (c *Provider) outcome(inv invocation, stream *cliStream, exitErr *exec.ExitError, stderr string) (cliResult, error) {
	res, perr := stream.finish()
	if perr != nil {
		if exitErr != nil {
			if inv.partial && strings.Contains(stderr, "include-partial-messages") {
				return cliResult{}, errPartialUnsupported
			}
			// The CLI died before printing a result: its stderr says why.
			return cliResult{}, &providers.Error{Class: providers.Server, Provider: providers.NameClaudeCode,
				Status: exitErr.ExitCode(), Msg: "exited without a result: " + providers.Excerpt(stderr, stderrExcerpt)}
		}
		return cliResult{}, &providers.Error{Class: providers.Malformed, Provider: providers.NameClaudeCode,
			Msg: "unparseable output: " + providers.Excerpt(stream.unparsedText(), stderrExcerpt), Err: perr}
	}
	if res.IsError && res.Subtype != subtypeMaxTurns {
		status := 0
		if exitErr != nil {
			status = exitErr.ExitCode()
		}
		detail := cmp.Or(res.Result, stderr)
		return cliResult{}, &providers.Error{Class: classifyCLIText(detail), Provider: providers.NameClaudeCode, Status: status,
			Msg: fmt.Sprintf("%s: %s", cmp.Or(res.Subtype, "error"), providers.Excerpt(detail, stderrExcerpt))}
	}
	// A CLI that printed only its result (no partial messages) is answered
	// as a whole: the result is the run's one text delta.
	if !stream.textEmitted {
		stream.text(strings.TrimSpace(res.Result))
	}
	return res, nil
}

// cliResult is the final object of `claude -p`: the last line of
// --output-format stream-json, or the whole of --output-format json.
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
// all messages that some CLIs print with --verbose.
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
func classifyCLIText(s string) providers.Class {
	l := strings.ToLower(s)
	switch {
	case strings.Contains(l, "rate limit") || strings.Contains(l, "429") || strings.Contains(l, "usage limit"):
		return providers.RateLimited
	case strings.Contains(l, "401") || strings.Contains(l, "403") || strings.Contains(l, "api key") ||
		strings.Contains(l, "authenticat") || strings.Contains(l, "/login"):
		return providers.Auth
	default:
		return providers.Server
	}
}
