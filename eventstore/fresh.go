package eventstore

import "context"

type freshKey struct{}

// FreshReads returns a context whose Loads read the database, not the
// stream cache. A process taking over work that another process did
// until a moment ago (a lease just acquired) folds the stream with it:
// its cached copy may not yet hold the other process's last events, and a
// decision taken on it could repeat an effect (a model call) before the
// append's version check refuses it.
func FreshReads(ctx context.Context) context.Context {
	return context.WithValue(ctx, freshKey{}, true)
}

// ReadsFresh tells whether ctx asks Loads to bypass the stream cache.
func ReadsFresh(ctx context.Context) bool {
	fresh, _ := ctx.Value(freshKey{}).(bool)
	return fresh
}
