// Package heartbeat holds the heartbeat: each scope's checklist (the Heartbeat aggregate) and the check-in cycle that works it.
package heartbeat
