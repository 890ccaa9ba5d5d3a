// Package intake holds the rules an incoming message must meet before it is recorded: channel and sender ids, names and text, bounded and cleaned.
package intake
