#!/usr/bin/env bash
# A new user's first minutes: `git clone` of this repository, then `make run`, until the server answers HTTP.
#
#   bench/make_run_fresh.sh [FILE ...]
#
# Clones the repository (committed files only) into a temporary folder, copies the FILEs given (paths
# from the repository root: uncommitted changes to measure) over the clone, runs `make run` there on a free
# port with MNS_DATA_DIR=:memory:, polls http://127.0.0.1:PORT/ until it answers anything, prints
# `served after S s` (clone included), stops the server and removes the clone. COLD=1 gives pip a fresh,
# empty cache (a first install on this machine); otherwise pip's usual cache is used (warm after a run).
# Run from anywhere; the timing is the script's own clock, from before the clone to the first answer.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/make-run-fresh.XXXXXX")
pid=
cleanup() {
	if [ -n "$pid" ]; then
		kill -TERM -- "-$pid" 2>/dev/null || true  # make and the server it started: their own group
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
if [ "${COLD:-0}" = 1 ]; then
	export PIP_CACHE_DIR="$work/pip-cache"
fi

start=$(date +%s.%N)
git clone --quiet "$root" "$work/clone"
for file in "$@"; do
	cp "$root/$file" "$work/clone/$file"
done
cd "$work/clone"
MNS_PORT=$port MNS_DATA_DIR=:memory: setsid make run >"$work/run.log" 2>&1 &
pid=$!
deadline=$(($(date +%s) + ${TIMEOUT:-600}))
until curl -s -o /dev/null "http://127.0.0.1:$port/"; do
	if ! kill -0 "$pid" 2>/dev/null || [ "$(date +%s)" -gt "$deadline" ]; then
		echo "make run did not serve:" >&2
		cat "$work/run.log" >&2
		exit 1
	fi
	sleep 0.1
done
end=$(date +%s.%N)
echo "served after $(python3 -c "print(f'{$end - $start:.1f}')") s ($(du -sh .venv | cut -f1) .venv)"
