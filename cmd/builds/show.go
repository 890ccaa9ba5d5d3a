package builds

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"

	builddom "github.com/omega-gateway/omega/domain/build"
)

// replyShown bounds an agent's reply in `omega build show`.
const replyShown = 400

func phaseName(st builddom.State) string {
	if st.Phase < len(st.Req.Topology.Phases) {
		return st.Req.Topology.Phases[st.Phase].Name
	}
	return "-"
}

// printState prints a build as `omega build show` does.
func printState(cmd *cobra.Command, st builddom.State) {
	r := st.Req
	cmd.Printf("build %s (%s)\nstatus: %s\ntopology: %s (%s)\nrequest: %s\nagent calls: %d of at most %d\n",
		r.ID, r.Name, st.Status, r.Topology.Name, short(r.TopologyHash), r.Request, st.Calls, r.WorstCaseCalls)
	if st.Reason != "" {
		cmd.Printf("reason: %s\n", st.Reason)
	}
	for i, p := range st.Phases {
		cmd.Printf("\nphase %d %s [%s] %s\n", i+1, p.Name, p.Type, p.Status)
		if p.Notice != "" {
			cmd.Printf("  message: %s\n", oneLine(p.Notice))
		}
		if p.Iterations > 0 {
			cmd.Printf("  corrective loop: %d fix(es)\n", p.Iterations)
		}
		if p.Reason != "" {
			cmd.Printf("  reason: %s\n", p.Reason)
		}
		for _, c := range p.Calls {
			reply := "(no reply recorded)"
			if c.Replied != nil {
				reply = oneLine(c.Replied.Text)
				if c.Replied.Error != "" {
					reply = "error: " + c.Replied.Error
				}
			}
			cmd.Printf("  call %d %s (%s): %s\n", c.Called.Call, c.Called.Agent, c.Called.Role, cut(reply, replyShown))
		}
		paths := make([]string, 0, len(p.Artifacts))
		for path := range p.Artifacts {
			paths = append(paths, path)
		}
		sort.Strings(paths)
		for _, path := range paths {
			cmd.Printf("  artifact %s %s\n", short(p.Artifacts[path]), path)
		}
	}
	if st.Summary != "" {
		cmd.Printf("\nsummary:\n%s\n", st.Summary)
	}
}

func short(h string) string { return cut(h, 12) }

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
