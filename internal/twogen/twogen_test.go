package twogen

import "testing"

// A full generation starts a new one: the entries of the one before stay
// readable until the next is full too.
func TestMapForgetsItsOlderGeneration(t *testing.T) {
	m := New[int, string](2)
	m.Put(1, "a")
	m.Put(2, "b")
	m.Put(3, "c") // 1 and 2 are now the old generation
	for _, k := range []int{1, 2, 3} {
		if _, ok := m.Get(k); !ok {
			t.Fatalf("%d forgotten one generation early", k)
		}
	}
	m.Put(4, "d")
	m.Put(5, "e") // 3 and 4 old, 1 and 2 gone
	for k, want := range map[int]bool{1: false, 2: false, 3: true, 4: true, 5: true} {
		if _, ok := m.Get(k); ok != want {
			t.Errorf("Get(%d) found %v, want %v", k, ok, want)
		}
	}
	if v, _ := m.Get(5); v != "e" {
		t.Errorf("Get(5) = %q, want e", v)
	}
}
