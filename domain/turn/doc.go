// Package turn holds a turn, from the message received through its context, provider calls, markers and reply to its completion (the Turn aggregate).
package turn
