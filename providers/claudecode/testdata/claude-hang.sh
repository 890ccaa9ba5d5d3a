#!/bin/sh
# Starts a child, records its pid in $FAKE_CLAUDE_PIDFILE, and hangs until
# killed. The child must die with it: the provider kills the process group.
: "${FAKE_CLAUDE_PIDFILE:?FAKE_CLAUDE_PIDFILE must be set}"
sleep 300 &
echo $! > "$FAKE_CLAUDE_PIDFILE"
wait
