# Sourced by the push checks (php/push_check.sh, python/push_check.sh) that start sample endpoints: a free loopback
# port for each, and every process started (its pid added to `pids`) stopped when the check exits.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT
