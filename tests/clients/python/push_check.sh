#!/usr/bin/env bash
# Runs the Python SDK's sample push receiver (sample/topic/server.py through its launcher
# sample/topic/simple_http_notify_endpoint.py, bound to loopback by run_endpoint.py) twice -- msg_type XML (the
# launcher's default) and SIMPLE -- then push_check.py (subscribe both, publish, read how each answered) and stops them.
# The receiver verifies a push's signature only when the server sends lower-case copies of the signed header names
# (the server's MNS_PUSH_HEADER_NAMES=with-lower-case-copies; ../run.sh starts one so for this check).
# Env: MNS_ENDPOINT, MNS_ACCESS_KEY_ID, MNS_ACCESS_KEY_SECRET; MNS_PYTHON_SDK_MIRROR (the SDK's git mirror: ../run.sh
# sets it), MNS_CLIENTS_BUILD (the ignored build folder, ../.build by default).
# The SDK tree is unpacked, unmodified, from the mirror into $MNS_CLIENTS_BUILD/python-push/sdk/ (rewritten each run);
# the receiver needs pycryptodomex, installed into $MNS_CLIENTS_BUILD/python-venv (created here if missing).
set -u
here=$(cd "$(dirname "$0")" && pwd)
mirror=${MNS_PYTHON_SDK_MIRROR:?set MNS_PYTHON_SDK_MIRROR (the git mirror of the Python SDK) or run ../run.sh}
build=${MNS_CLIENTS_BUILD:-$here/../.build}
work=$build/python-push
venv=$build/python-venv
mkdir -p "$build"
if ! "$venv/bin/python" -c 'import Cryptodome' 2>/dev/null; then
  python3 -m venv "$venv" && "$venv/bin/pip" install --quiet pycryptodomex >"$build/python-pip.log" 2>&1 \
    || { echo "FAIL python_push_setup: pip install pycryptodomex failed (see $build/python-pip.log)"; echo "0 passed, 1 failed"; exit 1; }
fi
rm -rf "$work" && mkdir -p "$work/sdk"
git -C "$mirror" archive HEAD mns sample sample_common.py sample_config.py sample.cfg | tar -x -C "$work/sdk" \
  || { echo "FAIL python_push_setup: cannot unpack the SDK from $mirror"; echo "0 passed, 1 failed"; exit 1; }

# shellcheck source=../endpoints.sh
. "$here/../endpoints.sh"
specs=()
for kind in xml simple; do
  port=$(free_port)
  mkdir -p "$work/$kind"
  msg_type=$([ "$kind" = xml ] && echo XML || echo SIMPLE)
  format=$([ "$kind" = xml ] && echo XML || echo SIMPLIFIED)
  (cd "$work/$kind" && exec "$venv/bin/python" -u "$here/run_endpoint.py" "$work/sdk" "$port" "$msg_type") \
    >"$work/$kind/stdout.log" 2>"$work/$kind/stderr.log" &
  pids+=($!)
  for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  specs+=("$kind|http://127.0.0.1:$port/notifications|$format|$work/$kind|$port")
done
MNS_PY_SDK_TREE="$work/sdk" PY_PUSH_RECEIVERS=$(IFS=';'; echo "${specs[*]}") "$venv/bin/python" "$here/push_check.py"
