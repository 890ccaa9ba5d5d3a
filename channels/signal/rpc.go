package signal

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
)

// rpcClient calls the daemon's JSON-RPC endpoint (POST /api/v1/rpc).
type rpcClient struct {
	base string
	http *http.Client
	seq  atomic.Int64
}

// rpcError is a JSON-RPC error as signal-cli sends it: -1 a user error
// (a bad recipient or group), -3 an I/O error, -4 an untrusted key, the
// -326xx codes protocol errors; data.response holds a send's results.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (e *rpcError) Error() string {
	return "signal-cli error " + strconv.Itoa(e.Code) + ": " + e.Message
}

// statusError is an HTTP failure of the daemon (or a proxy before it).
type statusError struct{ code int }

func (e statusError) Error() string { return "signal-cli daemon answered HTTP " + strconv.Itoa(e.code) }

// call runs method with params and decodes its result into out (nil:
// ignored).
func (r *rpcClient) call(ctx context.Context, method string, params, out any) error {
	id := r.seq.Add(1)
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return fmt.Errorf("signal: encode %s: %w", method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+"/api/v1/rpc", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("signal: %s: %w", method, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.http.Do(req)
	if err != nil {
		return fmt.Errorf("signal: %s: %w", method, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("signal: %s: %w", method, statusError{resp.StatusCode})
	}
	var reply struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&reply); err != nil {
		return fmt.Errorf("signal: %s: unreadable reply: %w", method, err)
	}
	if reply.Error != nil {
		return fmt.Errorf("signal: %s: %w", method, reply.Error)
	}
	if out == nil || len(reply.Result) == 0 {
		return nil
	}
	if err := json.Unmarshal(reply.Result, out); err != nil {
		return fmt.Errorf("signal: %s: unreadable result: %w", method, err)
	}
	return nil
}
