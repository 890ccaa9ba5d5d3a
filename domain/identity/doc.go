// Package identity holds the links that make one person of senders on different channels (the Identities aggregate).
package identity
