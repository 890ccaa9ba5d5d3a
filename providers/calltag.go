package providers

import "context"

// Call says what a provider call is for and for whom, so that the budget
// guard wrapping the provider can decide on it: Purpose is one of
// domain/usage's purposes, Sender the sender key it is for ("" for
// omega's own work), Background marks work that stops first when a
// limit nears its end (heartbeat, self-heal, action tasks).
type Call struct {
	Purpose    string
	Sender     string
	Background bool
}

type callKey struct{}

// WithCall tags ctx with what the calls made under it are for.
func WithCall(ctx context.Context, c Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallOf is the tag WithCall put on ctx; false when none.
func CallOf(ctx context.Context) (Call, bool) {
	c, ok := ctx.Value(callKey{}).(Call)
	return c, ok
}
