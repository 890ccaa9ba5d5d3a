package slack

import (
	"context"
	"sync"
	"time"
)

// names caches members' display names (users.info, scope users:read),
// so the pipeline greets people by name; without the scope or when the
// call fails the member id stands in.
type names struct {
	mu    sync.Mutex
	names map[string]string
}

// nameTimeout bounds the lookup: a name is not worth delaying a message.
const nameTimeout = 3 * time.Second

// maxNames bounds the cache; it starts over when full.
const maxNames = 4096

func (c *Channel) displayName(ctx context.Context, user string) string {
	c.names.mu.Lock()
	name, ok := c.names.names[user]
	c.names.mu.Unlock()
	if ok {
		return name
	}
	ctx, cancel := context.WithTimeout(ctx, nameTimeout)
	defer cancel()
	u, err := c.api.GetUserInfoContext(ctx, user)
	if err != nil {
		c.log.Debug("slack: no display name, using the member id", "user", user, "err", describe(err))
		return user
	}
	name = first(u.Profile.DisplayName, u.RealName, u.Name, user)
	c.names.mu.Lock()
	defer c.names.mu.Unlock()
	if c.names.names == nil || len(c.names.names) >= maxNames {
		c.names.names = map[string]string{}
	}
	c.names.names[user] = name
	return name
}

func first(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
