package emailtest

import (
	"strings"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

func sendPlain(addr, from, to, raw string) error {
	c, err := smtp.Dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Auth(sasl.NewPlainClient("", from, Password)); err != nil {
		return err
	}
	return c.SendMail(from, []string{to}, strings.NewReader(raw))
}
