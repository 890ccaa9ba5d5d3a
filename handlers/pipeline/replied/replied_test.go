package replied

import (
	"fmt"
	"testing"
)

func TestTurnsForgetTheOldestBeyondTheBound(t *testing.T) {
	r := New()
	for i := range remembered + 1 {
		r.Mark(fmt.Sprint(i))
	}
	if r.Has("0") || !r.Has("1") || !r.Has(fmt.Sprint(remembered)) {
		t.Fatal("the set did not keep the latest turns")
	}
	var none *Turns
	none.Mark("x")
	if none.Has("x") {
		t.Fatal("a nil set remembered")
	}
}
