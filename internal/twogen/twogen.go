// Package twogen is a map bounded by forgetting its older half at once: it
// keeps two generations of at most size entries each, and a put into a
// full current generation drops the old one. Recent entries stay; an
// entry read again only lives as long as when it was put.
package twogen

import "sync"

// Map is a bounded map safe for concurrent use; the zero value is not
// ready, use New.
type Map[K comparable, V any] struct {
	size int

	mu       sync.Mutex
	cur, old map[K]V
}

// New returns a Map of two generations of at most size entries each.
func New[K comparable, V any](size int) *Map[K, V] {
	return &Map[K, V]{size: max(size, 1)}
}

// Get returns k's value, from either generation.
func (m *Map[K, V]) Get(k K) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.cur[k]; ok {
		return v, true
	}
	v, ok := m.old[k]
	return v, ok
}

// Put sets k's value in the current generation, starting a new one (and
// forgetting the old) when it is full.
func (m *Map[K, V]) Put(k K, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur == nil || len(m.cur) >= m.size {
		m.old, m.cur = m.cur, make(map[K]V, m.size)
	}
	m.cur[k] = v
}
