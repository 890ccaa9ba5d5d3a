// Package access holds who may talk to omega beyond the allowlist: pairing codes, requests, the owner's approvals and revocations (the SenderPairing aggregate).
package access
