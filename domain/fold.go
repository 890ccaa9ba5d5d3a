package domain

// SetIn sets a key in a map a fold may not have made yet, and returns the
// map.
func SetIn[V any](m map[string]V, key string, v V) map[string]V {
	if m == nil {
		m = map[string]V{}
	}
	m[key] = v
	return m
}
