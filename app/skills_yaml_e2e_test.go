package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A SKILL.md written in the YAML its author uses elsewhere (a folded
// description, a block list of triggers with comments, a quoted value
// with a colon) loads: its description reaches /skills and its trigger
// brings its instructions into the prompt.
func TestSkillsAcceptFullYAMLFrontMatter(t *testing.T) {
	const skill = `---
name: "release: notes"  # quoted, with a colon
description: >-
  Drafts release notes
  from the changelog.
triggers:
  # the words that bring the skill in
  - changelog
  - release notes
---
RELEASE-INSTRUCTIONS: group the entries by kind.
`
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, dir := skillsClaude(t)
			vars := baseVars(t, b, claude)
			p := filepath.Join(vars["OMEGA_DATA_DIR"], "skills", "release")
			if err := os.MkdirAll(p, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(p, "SKILL.md"), []byte(skill), 0o600); err != nil {
				t.Fatal(err)
			}
			n := startNode(t, vars)
			say(t, n, "ana", "summarise the changelog please", "20s")
			if prompt, _, _ := call(t, dir, 0); !strings.Contains(prompt, "RELEASE-INSTRUCTIONS") {
				t.Fatalf("the triggered skill is not in the prompt:\n%s", prompt)
			}
			out := say(t, n, "ana", "/skills", "20s")
			for _, want := range []string{"release: notes: Drafts release notes from the changelog.", "Triggers: changelog, release notes"} {
				if !strings.Contains(out.Reply, want) {
					t.Fatalf("/skills lacks %q:\n%s", want, out.Reply)
				}
			}
		})
	}
}
