package doctor

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/handlers/build"
)

// checkTopologies validates the build topologies of the data directory;
// where there are none, the embedded default is deployed at the first
// build.
func checkTopologies(c *checkup, cfg config.Config) {
	dir := filepath.Join(cfg.DataDir, "topologies")
	good, problems := build.ReadAll(dir)
	for _, err := range problems {
		c.fail("topology", strings.ReplaceAll(err.Error(), "\n", "\n      "), "correct the file at the line named, or remove its folder to get the default back")
	}
	if len(good) == 0 && len(problems) == 0 {
		c.ok("topology", build.DefaultTopology+" (embedded; written to "+dir+" at the first build)")
	}
	for _, t := range good {
		c.ok("topology", fmt.Sprintf("%s: %d phases, at most %d agent calls per build", t.Name, len(t.Phases), t.WorstCaseCalls()))
	}
}
