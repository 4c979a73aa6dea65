#!/usr/bin/env bash
# Runs the test suite on each client family and version given, as `family[@version][:scope]`:
#   family  ioredis | iovalkey | node-redis (RESP2) | node-redis-resp3 | glide (the suite's RLOCK_TEST_CLIENT)
#   version a version or range of the family's package (ioredis, iovalkey, redis, @valkey/valkey-glide), installed with
#           --no-save and the lockfile's put back at the end; none: the lockfile's
#   :client the client-sensitive specs (CLIENT below) instead of the whole suite
#   :core   the core subset (CORE below) instead of the whole suite
#   :resp3  the specs whose outcome can depend on the reply protocol (RESP3 below)
#   :server the specs whose outcome can depend on the server's version (SERVER below)
#   :library the whole suite less the specs whose client is the same on every family (LIBRARY_EXCLUDE)
# The servers are redis-server from PATH, or the binary RLOCK_TEST_SERVER names (tools/redis8.sh,
# tools/valkey.sh). RLOCK_TEST_EXCLUDE: an extended regex of spec paths left out as well (not with
# the full scope).
# Example: tools/test-clients.sh node-redis iovalkey:client ioredis@5.9.0:core
set -euo pipefail
cd "$(dirname "$0")/.."

# The specs whose outcome can depend on the client family: the connection port and its adapters,
# every lock kind's scripts as the client sends them, pub/sub and wake-ups, resends and faults
# through the proxy, Cluster and Sentinel. The rest (leases that move, max hold time, the CLI,
# OpenTelemetry, inspect, validation) runs above the port and is checked on ioredis and node-redis.
CLIENT=(
  spec/client.spec.ts spec/connection-failures.spec.ts spec/clients # the port and adapters
  spec/locks spec/scripts spec/ops/memory-limit.spec.ts              # every kind's scripts
  spec/waiting spec/synchronizers spec/leadership                    # wake-ups and notices
  spec/faults                                                        # resends and faults
  spec/cluster spec/sentinel                                         # topologies
  spec/renewal-thread                                                # a client made in a worker thread
)
# ... less what runs above the port whatever the client (an extended regex on the file's path):
# exclusion across child processes, memory left behind, re-entry leases (the scripts' own rule).
CLIENT_EXCLUDE='processes\.spec\.ts$|^spec/faults/memory\.spec\.ts$|^spec/faults/reentry-lease\.spec\.ts$'
# The whole suite less the specs that run the same whatever the family: the `rlock` command's
# (spec/cli: the command opens its own connection, with ioredis whenever it is installed), the
# model-based searches (spec/model: they drive ioredis connections of their own), the torture
# checker's (spec/torture: no client at all), and those that run above the port (CLIENT_EXCLUDE).
# `npm test` runs them on ioredis.
LIBRARY_EXCLUDE="^spec/(cli|model|torture)/|$CLIENT_EXCLUDE"
# What RESP3 changes for a client: its replies (maps, nulls, booleans) and pub/sub as pushes on the
# command connection, so the port and adapters, wake-ups and notices, the proxy's framing, the
# topologies. A script's reply is converted alike in both protocols (no script calls
# redis.setresp), so the scripts' specs run on RESP2 only.
RESP3=(
  spec/client.spec.ts spec/connection-failures.spec.ts spec/clients spec/locks
  spec/waiting spec/leadership spec/synchronizers/latch.spec.ts
  spec/faults/resubscribe.spec.ts spec/faults/resend.spec.ts spec/cluster spec/sentinel
)
# What a server's version changes: the scripts, pub/sub, the script cache and eviction, errors,
# the topologies. The resends through the fault proxy are the client's and run on Redis 7.
SERVER=(
  spec/client.spec.ts spec/connection-failures.spec.ts spec/clients
  spec/locks spec/scripts spec/ops/memory-limit.spec.ts
  spec/waiting spec/synchronizers spec/leadership
  spec/faults/script-cache.spec.ts spec/faults/redis-errors.spec.ts spec/faults/resubscribe.spec.ts
  spec/cluster spec/sentinel
)
# Locks of every kind, the client families, resends through the fault proxy, the synchronizers.
CORE=(spec/locks spec/clients spec/client.spec.ts spec/faults/resend.spec.ts spec/faults/silent-partition.spec.ts spec/synchronizers/semaphore.spec.ts spec/synchronizers/latch.spec.ts)

package_of() {
  case "$1" in
    ioredis) echo ioredis ;;
    iovalkey) echo iovalkey ;;
    node-redis | node-redis-resp3) echo redis ;;
    glide) echo @valkey/valkey-glide ;;
    *) echo "unknown client family: $1" >&2; exit 2 ;;
  esac
}
installed_version() { node -p "require('./node_modules/$1/package.json').version"; }
locked_version() { node -p "require('./package-lock.json').packages['node_modules/$1'].version"; }

changed=()
restore() {
  for pkg in "${changed[@]}"; do
    npm install --no-save --no-audit --no-fund --loglevel=error "$pkg@$(locked_version "$pkg")" >/dev/null
  done
}
trap restore EXIT

server="$("${RLOCK_TEST_SERVER:-redis-server}" --version | awk '{ print $1, $3 }')"
results="$(mktemp -d)"
summary=()
for entry in "$@"; do
  spec="${entry%%:*}"
  scope=full
  [ "$spec" != "$entry" ] && scope="${entry#*:}"
  family="${spec%%@*}"
  version=""
  [ "$family" != "$spec" ] && version="${spec#*@}"
  # `redis@6` names node-redis by its package.
  [ "$family" = redis ] && family=node-redis
  pkg="$(package_of "$family")"
  if [ -n "$version" ]; then
    npm install --no-save --no-audit --no-fund --loglevel=error "$pkg@$version"
    changed+=("$pkg")
  elif [ "$(installed_version "$pkg")" != "$(locked_version "$pkg")" ]; then
    npm install --no-save --no-audit --no-fund --loglevel=error "$pkg@$(locked_version "$pkg")"
  fi
  installed="$(installed_version "$pkg")"
  label="$family ($pkg $installed, $scope) on $server"
  echo "== tests on $label"
  files=()
  case "$scope" in
    full) ;;
    client) mapfile -t files < <(find "${CLIENT[@]}" -name '*.spec.ts' | grep -Ev "$CLIENT_EXCLUDE" | sort) ;;
    core) files=("${CORE[@]}") ;;
    resp3) mapfile -t files < <(find "${RESP3[@]}" -name '*.spec.ts' | grep -Ev "$CLIENT_EXCLUDE" | sort) ;;
    server) mapfile -t files < <(find "${SERVER[@]}" -name '*.spec.ts' | grep -Ev "$CLIENT_EXCLUDE" | sort) ;;
    library) mapfile -t files < <(find spec -name '*.spec.ts' | grep -Ev "$LIBRARY_EXCLUDE" | sort) ;;
    *) echo "unknown scope: $scope (full, client, core, library, resp3 or server)" >&2; exit 2 ;;
  esac
  if [ -n "${RLOCK_TEST_EXCLUDE:-}" ] && [ "${#files[@]}" -gt 0 ]; then
    mapfile -t files < <(printf '%s\n' "${files[@]}" | grep -Ev "$RLOCK_TEST_EXCLUDE")
  fi
  out="$results/$family-$installed-$scope.json"
  pass_t0=$SECONDS
  # The verdict is read from the JSON report below, so a failure there still reports.
  RLOCK_TEST_CLIENT="$family" npx --no-install vitest run "${files[@]}" --reporter=dot --reporter=json --outputFile="$out" || true
  line="$(node -e "
    const fs = require('fs');
    if (!fs.existsSync(process.argv[1])) { console.log('no report'); process.exit(1); }
    const r = JSON.parse(fs.readFileSync(process.argv[1], 'utf8'));
    console.log(r.numPassedTests + ' passed, ' + r.numFailedTests + ' failed, ' + r.numPendingTests + ' skipped');
    if (r.numTotalTests === 0 || r.numFailedTests > 0 || !r.success) process.exit(1);
  " "$out")" || { echo "tests on $label: $line" >&2; exit 1; }
  summary+=("$label: $line, $((SECONDS - pass_t0)) s")
done
printf 'tests per client: %s\n' "${summary[@]}"
