// Package selfheal holds the single self-healing effort: its iterations, follow-ups, escalation and resolution.
package selfheal
