#!/usr/bin/env bash
# Drives Alibaba's own MNS SDKs against this repository's server (`make run`), as their samples use them:
#
#   tests/clients/run.sh [PORT [PYTHON_PUSH_PORT]]      (free ports are picked when not given)
#
# Checks (each prints `PASS name` / `FAIL name: reason` per case, then `N passed, M failed`):
#   java_v2, java_v4  java/Check.java: the Java SDK 2.0.0 (aliyun-sdk-mns), signatures V2, then V4
#   java_push         java/PushCheck.java: the Java SDK's sample push receiver HttpEndpointSubscription
#   php_sdk           php/mns_check.php: the PHP SDK 1.4.0 (aliyun-mns-php-sdk)
#   go_sdk            go/mns_check.go: the Go SDK 2.0.1 (aliyun-mns-go-sdk)
#   php_push          php/push_check.sh: the PHP SDK's sample push receiver Samples/Topic/http_server_sample.php
#   python_push       python/push_check.sh: the Python SDK's sample push receiver sample/topic/server.py
# The first six run against one server started with the defaults; python_push against a second server started with
# MNS_PUSH_HEADER_NAMES=with-lower-case-copies (that sample looks the signed headers up by lower-case names only).
# Both: `make run` in the repository root on 127.0.0.1, MNS_DATA_DIR=:memory:, the fixed account/keys/region below.
#
# 1. builds the SDKs with shared/clients/{java,php,go}/build.sh (the `shared/` folder beside the checkout; cached in
#    ~/.cache/mns-sdks/<lang>, idempotent), compiles the Java checks with the SDK's sample HttpEndpointSubscription
#    and builds the Go check; the samples are taken, unmodified, from the SDKs' git mirrors at run time;
# 2. starts the default server, runs the six checks, stops it; starts the lower-case-copies server, runs python_push,
#    stops it;
# 3. prints each check's summary line and a total.
# Everything built or fetched goes to tests/clients/.build/ (git-ignored; a dot folder so that pytest and mypy do
# not walk into the SDK sources unpacked there); logs in .build/logs/.
# Exit status: 0 when every case passed, 1 when some failed, 2 when the run itself could not be made.
#
# Env: MNS_JAVA_SDK_MIRROR, MNS_PHP_SDK_MIRROR, MNS_GO_SDK_MIRROR, MNS_PYTHON_SDK_MIRROR (the SDKs' bare git mirrors;
#      default ../.mirror/aliyun+aliyun-mns-<lang>-sdk/repo from the repository root, where `fetch` puts them);
#      MNS_SHARED (the shared folder, ../shared from the repository root); SERVER_WAIT (seconds, 600);
#      PUSH_REDELIVERY_WINDOW (seconds the push checks watch for a redelivery, 25);
#      MNS_ENGINE=moto MNS_ROLES=enforce MNS_ROLES_LOG=<file>: the servers with every function's role enforced, and a
#      call any role refused counted as a failure (docs/deploying.md);
#      MNS_SERVER_REV=<commit>: serve that commit of this repository instead of the work tree (unpacked with
#      `git archive` into .build/servers/<commit>/, run with the repository's .venv and PYTHONPATH pointing at it).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel 2>/dev/null) || root=$(cd "$here/../.." && pwd)
shared=${MNS_SHARED:-$root/../shared}
build=$here/.build
logs=$build/logs
mkdir -p "$logs"
export MNS_CLIENTS_BUILD=$build

export MNS_ACCOUNT_ID=1234567890123456
export MNS_ACCESS_KEY_ID=SdkClientsCheckKeyId
export MNS_ACCESS_KEY_SECRET=SdkClientsCheckKeySecret
export MNS_REGION=cn-hangzhou
cache=${XDG_CACHE_HOME:-$HOME/.cache}/mns-sdks
java_build=${MNS_JAVA_SDK_BUILD:-$cache/java}
php_build=${MNS_PHP_SDK_BUILD:-$cache/php}
go_build=${MNS_GO_SDK_BUILD:-$cache/go}

die() { echo "run.sh: $*" >&2; exit 2; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=${1:-$(free_port)}
py_port=${2:-$(free_port)}
[ "$port" != "$py_port" ] || die "the two servers need two ports"

# ---- the SDK mirrors ----------------------------------------------------------------------------------------------
mirror() {  # VAR lang: $VAR, or ../.mirror/aliyun+aliyun-mns-<lang>-sdk/repo from the repository root
  local var=$1 lang=$2 d
  if [ -z "${!var:-}" ]; then
    d=$root/../.mirror/aliyun+aliyun-mns-$lang-sdk/repo
    [ -d "$d" ] && export "$var=$(cd "$d" && pwd)"
  fi
  [ -n "${!var:-}" ] && git -C "${!var}" rev-parse --verify -q HEAD >/dev/null \
    || die "the $lang SDK's git mirror was not found: set $var (or fetch github:aliyun/aliyun-mns-$lang-sdk)"
}
mirror MNS_JAVA_SDK_MIRROR java
mirror MNS_PHP_SDK_MIRROR php
mirror MNS_GO_SDK_MIRROR go
mirror MNS_PYTHON_SDK_MIRROR python
[ -d "$shared/clients" ] || die "$shared/clients not found (the shared folder beside the checkout; or set MNS_SHARED)"

# ---- 1. build -----------------------------------------------------------------------------------------------------
bash "$shared/clients/java/build.sh" || die "the Java SDK build failed"
bash "$shared/clients/php/build.sh" || die "the PHP SDK build failed"
bash "$shared/clients/go/build.sh" || die "the Go SDK build failed"

cp_sdk=$(cat "$java_build/classpath")
sample=src/test/java/com/aliyun/mns/sample/topic/subscription/HttpEndpointSubscription.java
jb=$build/java
stamp="$(cat "$java_build/.stamp") $(git -C "$MNS_JAVA_SDK_MIRROR" rev-parse HEAD) $(cat "$here/java/Check.java" "$here/java/PushCheck.java" | sha256sum | cut -c1-16)"
if [ "$(cat "$jb/.stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$jb" && mkdir -p "$jb/classes" "$jb/sample-src"
  git -C "$MNS_JAVA_SDK_MIRROR" archive HEAD "$sample" | tar -x -C "$jb/sample-src" \
    || die "cannot extract $sample from $MNS_JAVA_SDK_MIRROR"
  javac -nowarn -Xlint:none -encoding UTF-8 -cp "$cp_sdk" -d "$jb/classes" \
    "$jb/sample-src/$sample" "$here/java/Check.java" "$here/java/PushCheck.java" >"$jb/javac.log" 2>&1 \
    || { cat "$jb/javac.log" >&2; die "javac failed"; }
  echo "$stamp" >"$jb/.stamp"
fi
java_cp="$jb/classes:$cp_sdk:/usr/share/java/slf4j-nop.jar"

mkdir -p "$build/go"
(cd "$here/go" && GO111MODULE=off GOPATH="$go_build/gopath:/usr/share/gocode" GOPROXY=off GOFLAGS= \
  GOCACHE="$go_build/gocache" go build -o "$build/go/mns_check" mns_check.go) || die "building go/mns_check failed"

# ---- 2. the servers -----------------------------------------------------------------------------------------------
wait_s=${SERVER_WAIT:-600}
# `make run` creates .venv the first time; another process may be doing it now.
if [ -d "$root/.venv" ] && [ ! -f "$root/.venv/.installed" ] && [ ! -f "$root/.venv/.installed-serve" ]; then
  echo "# waiting for $root/.venv to be installed (another process is installing)"
  for _ in $(seq "$wait_s"); do [ -f "$root/.venv/.installed" ] || [ -f "$root/.venv/.installed-serve" ] && break; sleep 1; done
fi
srv=$root
srv_env=()
if [ -n "${MNS_SERVER_REV:-}" ]; then
  rev=$(git -C "$root" rev-parse --verify "${MNS_SERVER_REV}^{commit}") || die "no commit $MNS_SERVER_REV in $root"
  [ -f "$root/.venv/.installed" ] || [ -f "$root/.venv/.installed-serve" ] \
    || die "MNS_SERVER_REV needs the repository's .venv: run \`make run\` once in $root"
  srv=$build/servers/$rev
  if [ ! -f "$srv/Makefile" ]; then
    rm -rf "$srv" && mkdir -p "$srv"
    git -C "$root" archive "$rev" | tar -x -C "$srv" || die "git archive $rev failed"
    ln -s "$root/.venv" "$srv/.venv"
  fi
  # Older than the venv's stamps: `make run` there must not reinstall the shared .venv from the unpacked copy.
  touch -d '2000-01-01' "$srv/pyproject.toml"
  srv_env=(PYTHONPATH="$srv:$srv/layers/mnsd/python")
  server_desc="commit $rev (MNS_SERVER_REV, unpacked in $srv)"
else
  rev=$(git -C "$root" rev-parse --short HEAD 2>/dev/null) || rev="(not a git checkout)"
  dirty=$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | wc -l)
  server_desc="work tree of $root at $rev ($dirty modified tracked files)"
fi

server_pid=
start_server() {  # label, port, extra env (NAME=value)...
  local label=$1 p=$2
  shift 2
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then die "something already listens on 127.0.0.1:$p: pass other ports"; fi
  # Keys file in .build/, not in the project's .mns/ (make run's default with :memory:).
  (cd "$srv" && exec env -u MNS_PUSH_HEADER_NAMES MNS_PORT="$p" MNS_DATA_DIR=:memory: \
    MNS_KEYS_FILE="$build/keys-$label.json" "${srv_env[@]}" "$@" setsid make run) >"$logs/server-$label.log" 2>&1 &
  server_pid=$!
  local up=0
  for _ in $(seq $((wait_s * 5))); do
    if grep -q "MNS API listening on" "$logs/server-$label.log" 2>/dev/null \
      && (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then up=1; break; fi
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.2
  done
  [ "$up" = 1 ] || { cat "$logs/server-$label.log" >&2; die "the server did not start on port $p (log: $logs/server-$label.log)"; }
  export MNS_ENDPOINT=http://127.0.0.1:$p
}
stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM -- "-$server_pid" 2>/dev/null || kill -TERM "$server_pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$server_pid" 2>/dev/null
  fi
  [ -z "$server_pid" ] || wait "$server_pid" 2>/dev/null
  server_pid=
}
trap stop_server EXIT
trap 'exit 130' INT TERM

echo "# $(date -u '+%Y-%m-%d %H:%M:%SZ') server: $server_desc"
echo "# SDKs: java $(cat "$java_build/sdk-version"), php $(cat "$php_build/sdk-version"), go $(cat "$go_build/sdk-version")," \
  "python $(git -C "$MNS_PYTHON_SDK_MIRROR" rev-parse HEAD) (receiver sample)"
echo "# account $MNS_ACCOUNT_ID, key $MNS_ACCESS_KEY_ID, region $MNS_REGION; logs: $logs"

# ---- 3. the checks ------------------------------------------------------------------------------------------------
summaries=()
total_pass=0
total_fail=0
run_check() {  # label, command...
  local label=$1 line f
  shift
  echo
  echo "== $label"
  "$@" 2>"$logs/$label.stderr" | tee "$logs/$label.out"
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$logs/$label.out" | tail -1)
  if [ -z "$line" ]; then
    line="0 passed, 1 failed"
    echo "FAIL $label: the check printed no summary line (see $logs/$label.stderr)"
    line="$line (no summary line: the check did not finish)"
  fi
  summaries+=("$label: $line")
  total_pass=$((total_pass + ${line%% passed*}))
  f=${line#*, }
  total_fail=$((total_fail + ${f%% failed*}))
}

start_server default "$port"
echo
echo "# server 1: default push header names (Content-md5, Content-Type, Date), $MNS_ENDPOINT"
run_check java_v2 java -cp "$java_cp" Check V2
run_check java_v4 java -cp "$java_cp" Check V4
PUSH_ENDPOINT_LOG="$logs/java_push-endpoint.log" run_check java_push java -cp "$java_cp" PushCheck V2
run_check php_sdk php "$here/php/mns_check.php"
run_check go_sdk "$build/go/mns_check"
run_check php_push bash "$here/php/push_check.sh"
stop_server

start_server python-push "$py_port" MNS_PUSH_HEADER_NAMES=with-lower-case-copies
echo
echo "# server 2: MNS_PUSH_HEADER_NAMES=with-lower-case-copies (the Python SDK's sample receiver looks up" \
  "content-md5, content-type, date in lower case), $MNS_ENDPOINT"
run_check python_push bash "$here/python/push_check.sh"
stop_server
trap - EXIT

# With the roles enforced (MNS_ENGINE=moto MNS_ROLES=enforce, docs/deploying.md): every call a role refused fails.
if [ -n "${MNS_ROLES_LOG:-}" ]; then
  refused=$(grep -c -E '"(refused|undecidable)": "' "$MNS_ROLES_LOG" 2>/dev/null || true)
  summaries+=("roles: $(grep -c . "$MNS_ROLES_LOG" 2>/dev/null || echo 0) calls checked, ${refused:-0} refused ($MNS_ROLES_LOG)")
  if [ "${refused:-0}" -gt 0 ]; then
    grep -E '"(refused|undecidable)": "' "$MNS_ROLES_LOG" | sort | uniq -c | head -20
    total_fail=$((total_fail + refused))
  fi
fi

echo
echo "== summary"
printf '%s\n' "${summaries[@]}"
echo "total: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
