#!/usr/bin/env bash
# Serves the PHP SDK's Samples/Topic/http_server_sample.php with `php -S 127.0.0.1:PORT` twice -- as shipped, and a
# copy with its commented-out signature check ("#$stringToSign ... #}") uncommented -- then runs push_check.php
# (subscribe both as HttpEndpoints, publish, read each push's status from the `php -S` logs) and stops them.
# Env: MNS_ENDPOINT, MNS_ACCESS_KEY_ID, MNS_ACCESS_KEY_SECRET (as push_check.php), MNS_PHP_SDK_MIRROR (the SDK's git
# mirror: ../run.sh sets it), MNS_CLIENTS_BUILD (the ignored build folder, ../.build by default).
# The sample is taken, unmodified, from the SDK's git mirror into $MNS_CLIENTS_BUILD/php-push/ (rewritten each run).
set -u
here=$(cd "$(dirname "$0")" && pwd)
mirror=${MNS_PHP_SDK_MIRROR:?set MNS_PHP_SDK_MIRROR (the git mirror of the PHP SDK) or run ../run.sh}
work=${MNS_CLIENTS_BUILD:-$here/../.build}/php-push
rm -rf "$work" && mkdir -p "$work/shipped" "$work/verifying"

sample=Samples/Topic/http_server_sample.php
git -C "$mirror" show "HEAD:$sample" >"$work/shipped/http_server_sample.php" \
  || { echo "FAIL php_push_setup: cannot read $sample from $mirror"; echo "0 passed, 1 failed"; exit 1; }
# The copy: inside the "#!!!NOTICE" block, strip the leading '#' of each commented-out line (not of the '####' rules
# or the notice itself).
python3 - "$work/shipped/http_server_sample.php" "$work/verifying/http_server_sample.php" <<'EOF'
import re, sys
src = open(sys.argv[1]).read()
start = src.index("#!!!NOTICE")
end = src.index("// 2. now parse the content")
block = re.sub(r"(?m)^#(?![#!])", "", src[start:end])
out = src[:start] + block + src[end:]
assert "\n$pass = verify($stringToSign, $signature, $publicKey);" in out, "signature check not uncommented"
open(sys.argv[2], "w").write(out)
EOF
[ -s "$work/verifying/http_server_sample.php" ] || { echo "FAIL php_push_setup: could not make the verifying copy"; echo "0 passed, 1 failed"; exit 1; }

# shellcheck source=../endpoints.sh
. "$here/../endpoints.sh"
specs=()
for kind in shipped verifying; do
  port=$(free_port)
  # the router runs the sample file unmodified (require) and records the status it answered with
  (cd "$work/$kind" && HARNESS_SAMPLE="$work/$kind/http_server_sample.php" HARNESS_STATUS_LOG="$work/$kind.status" \
     exec php -S "127.0.0.1:$port" "$here/status_router.php") >"$work/$kind.out" 2>"$work/$kind.log" &
  pids+=($!)
  for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  specs+=("$kind|http://127.0.0.1:$port/notifications|$work/$kind.log|$work/$kind.status")
done
PHP_PUSH_RECEIVERS=$(IFS=';'; echo "${specs[*]}") php "$here/push_check.php"
rc=$?
exit $rc
