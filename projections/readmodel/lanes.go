package readmodel

// Laned is a projection that may be applied beside the others, in its own
// transactions, because no reader needs it to move together with them: its
// readers read its own checkpoint or tolerate a lag of a batch. A read
// model applied alone costs the others none of its round trips.
type Laned interface {
	Lane() string
}

// LaneOf is the lane p is applied in; "" is the lane of every projection
// that does not name one.
func LaneOf(p Projection) string {
	if l, ok := p.(Laned); ok {
		return l.Lane()
	}
	return ""
}

// Lanes splits ps by lane, the projections of each in their order, the
// lanes in order of first appearance. On SQLite, whose one writer applies
// every transaction in turn anyway, all of them are one lane.
func Lanes(d Dialect, ps []Projection) [][]Projection {
	if d == SQLite {
		return [][]Projection{ps}
	}
	var out [][]Projection
	at := map[string]int{}
	for _, p := range ps {
		l := LaneOf(p)
		i, ok := at[l]
		if !ok {
			i, at[l] = len(out), len(out)
			out = append(out, nil)
		}
		out[i] = append(out[i], p)
	}
	return out
}
