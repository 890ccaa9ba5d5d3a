package emailtest

import "testing"

// Mailbox lists messages in delivery order: Dovecot does not pad the
// microseconds in a Maildir name, so text order is not delivery order.
func TestDeliveryOrder(t *testing.T) {
	cases := []struct {
		earlier, later string
	}{
		{"1795822825.M99999P26203.vm,S=1699,W=1745", "1795822825.M100000P26203.vm,S=1691,W=1737"},
		{"1795822825.M5P1.vm", "1795822825.M206231P1.vm"},
		{"999999999.M900000P1.vm", "1000000000.M1P1.vm"},
		{"1795822825.M206231P26203.vm", "1795822825.M206231P26203.vm:2,S"},
		{"a-name-not-dovecot's", "b-name-not-dovecot's"},
	}
	for _, c := range cases {
		if deliveryOrder(c.earlier, c.later) >= 0 || deliveryOrder(c.later, c.earlier) <= 0 {
			t.Errorf("%s is not ordered before %s", c.earlier, c.later)
		}
	}
}
