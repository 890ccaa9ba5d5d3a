// Package system holds the events of omega itself: poisoned messages and commands, channel health, owner alerts, WhatsApp device pairing and recorded decision inputs.
package system
