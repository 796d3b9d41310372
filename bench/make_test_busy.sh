#!/usr/bin/env bash
# `make test` on a fresh clone beside CPU-bound processes: the bound of docs/testing.md (10 minutes on 2 cores
# beside one busy process), measured.
#
#   bench/make_test_busy.sh [FILE ...]
#
# Clones the repository (committed files only) into a temporary folder, copies the FILEs given (paths from the
# repository root: uncommitted changes to measure) over the clone, starts BUSY (default 1) processes that spin
# (`python3 -c 'while True: pass'`), then runs `make test` in the clone with TEST_WORKERS (the Makefile's default
# unless set) and prints its wall time, its CPU (user + sys of make and everything it waited for), the load average
# sampled every 30 s, and how it ended; the busy processes are stopped and the clone removed after (KEEP=1 keeps
# it). A first install (the venv's wheels, the CDK CLI) is part of `make test` on a fresh clone and is timed with it;
# `.venv` can be linked from a checkout that has one (VENV=path/.venv) to time the rest alone. The full log is
# `make-test.log` in the clone. Run it on an otherwise quiet machine: other work beside it is not the bound's
# condition (the load samples show whether it held).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/make-test-busy.XXXXXX")
busy=()
sampler=
cleanup() {
	for pid in "${busy[@]}" $sampler; do
		kill "$pid" 2>/dev/null || true
	done
	if [ "${KEEP:-0}" != 1 ]; then
		rm -rf "$work"
	else
		echo "kept: $work/clone" >&2
	fi
}
trap cleanup EXIT

git clone --quiet "$root" "$work/clone"
for file in "$@"; do
	cp "$root/$file" "$work/clone/$file"
done
cd "$work/clone"
if [ -n "${VENV:-}" ]; then
	# Another checkout's venv: its install stamp stands for this clone's pyproject.toml, and the clone's own code
	# comes first on the path (that venv's editable install points at its checkout).
	ln -s "$VENV" .venv
	touch -r "$VENV/.installed" pyproject.toml
	export PYTHONPATH="$PWD:$PWD/layers/mnsd/python"
fi

for _ in $(seq "${BUSY:-1}"); do
	python3 -c 'while True: pass' &
	busy+=($!)
done
(
	while true; do
		cut -d' ' -f1 /proc/loadavg >>"$work/load"
		sleep 30
	done
) &
sampler=$!

workers=()
if [ -n "${TEST_WORKERS:-}" ]; then
	workers=("TEST_WORKERS=$TEST_WORKERS")
fi
start=$(date +%s.%N)
status=0
/usr/bin/time -f "%U %S" -o "$work/cpu" make test "${workers[@]}" >make-test.log 2>&1 || status=$?
end=$(date +%s.%N)

python3 - "$start" "$end" "$work/cpu" "$work/load" "$status" "${BUSY:-1}" <<'EOF'
import sys

start, end, cpu, load, status, busy = sys.argv[1:]
wall = float(end) - float(start)
user, system = (float(v) for v in open(cpu).read().split()[-2:])
loads = [float(v) for v in open(load).read().split()]
print(f"make test beside {busy} busy process(es): {int(wall // 60)} min {wall % 60:.0f} s wall ({wall:.0f} s), "
      f"CPU {user + system:.0f} s (user {user:.0f}, sys {system:.0f}), exit {status}")
print(f"load (1 min), every 30 s: mean {sum(loads) / len(loads):.1f}, {min(loads):.1f}-{max(loads):.1f}")
EOF
tail -n 3 make-test.log
exit "$status"
