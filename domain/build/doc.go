// Package build is the aggregate of a build: a piece of software a person
// asked for, made by the agents of a topology one phase after another.
// Each build is a stream (build-<id>) that records every phase, every
// agent call and its reply before anything acts on it, so a build cut off
// by a crash resumes where it was without calling an agent twice. The
// topology (phases, agents, caps) is plain data here; reading it from
// TOML is the handler's business.
package build
