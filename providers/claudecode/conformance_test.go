package claudecode_test

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/providers"
	"github.com/omega-gateway/omega/providers/claudecode"
	"github.com/omega-gateway/omega/providers/providertest"
	"github.com/omega-gateway/omega/providers/providertest/suite"
)

func TestClaudeCodeConformance(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	claude := func(t *testing.T, script string) providers.Provider {
		return claudecode.New(providers.Config{ClaudeBin: providertest.FakeClaude(t, script), ModelFast: "fast"}, quiet)
	}
	reported := func(msg string) string {
		return fmt.Sprintf("cat <<'JSON'\n{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"result\":%q,\"session_id\":\"s\"}\nJSON\nexit 1\n", msg)
	}
	suite.Run(t, suite.Harness{
		Reply: func(t *testing.T, text string) providers.Provider {
			return claude(t, providertest.ClaudeResult(text, "sess-1"))
		},
		Fail: func(t *testing.T, class providers.Class) (providers.Provider, bool) {
			switch class {
			case providers.RateLimited:
				return claude(t, reported("API Error: 429 rate limit exceeded")), true
			case providers.Auth:
				return claude(t, reported("API Error: 401 invalid api key")), true
			case providers.Server:
				return claude(t, "echo 'could not connect' >&2\nexit 3\n"), true
			}
			return nil, false // the CLI builds the request itself
		},
		Hang: func(t *testing.T) providers.Provider { return claude(t, "exec sleep 300\n") },
		Stream: func(t *testing.T, plan providertest.StreamPlan) providers.Provider {
			if plan.Whole { // a CLI that prints only its result
				return claude(t, providertest.ClaudeResult(plan.Reply(), "sess-1"))
			}
			return claude(t, providertest.ClaudeStream(plan, "sess-1"))
		},
		Resume: func(t *testing.T) (providers.Provider, func() []string) {
			argv := filepath.Join(t.TempDir(), "argv")
			p := claude(t, fmt.Sprintf("printf '%%s\\n' \"$@\" > %q\n", argv)+providertest.ClaudeResult("resumed", "sess-next"))
			return p, func() []string {
				raw, err := os.ReadFile(argv)
				if err != nil {
					t.Fatal(err)
				}
				args := strings.Split(string(raw), "\n")
				var ids []string
				for i, a := range args[:len(args)-1] {
					if a == "--resume" {
						ids = append(ids, args[i+1])
					}
				}
				return ids
			}
		},
	})
}
