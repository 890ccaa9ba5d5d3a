#!/bin/sh
# A successful run. The reply names no model, as older CLIs do.
cat <<'JSON'
{"type":"result","subtype":"success","is_error":false,"result":"Hello from fake Claude.","session_id":"sess-ok","num_turns":2,"usage":{"input_tokens":100,"cache_read_input_tokens":20,"output_tokens":30},"total_cost_usd":0.01,"duration_ms":1200}
JSON
