// Package summary holds the summaries of closed conversations and the facts extracted from them.
package summary
