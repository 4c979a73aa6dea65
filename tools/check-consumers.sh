#!/usr/bin/env bash
# Checks the packed rlock as users get it, once per client package given as `package@version`
# (ioredis, redis, iovalkey or @valkey/valkey-glide): a fresh TypeScript app installs the tarball and that one client
# only, type-checks tools/consumer/<family>/ (ESM and CJS) against it, and loads rlock with both
# `import` and `require`, so no client rlock does not need is ever required, and runs the `rlock`
# command, which must find that client by itself, against a redis-server started here (not for
# GLIDE: the command opens its connection with ioredis, iovalkey or node-redis). The README's
# TypeScript quick starts are type-checked with their client, and its JavaScript quick start is
# run (on the last ioredis given) against that server.
# Usage: tools/check-consumers.sh ioredis@5.9.0 ioredis@6 redis@6 iovalkey @valkey/valkey-glide@2
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
[ "$#" -gt 0 ] || set -- ioredis@5.9.0 ioredis@5 ioredis@6 redis@6 iovalkey @valkey/valkey-glide@2

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# One redis-server for the CLI runs and the JavaScript quick start.
port="$(node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")"
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no >"$work/redis.log" 2>&1 &
redis_pid=$!
trap 'kill "$redis_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done

[ -f dist/index.js ] || npm run build
tarball="$work/$(npm pack --ignore-scripts --silent --pack-destination "$work")"
typescript="$(node -p "require('./node_modules/typescript/package.json').version")"

# The README's blocks: the fenced block after each heading.
readme_block() {
  awk -v heading="$1" -v fence="$2" '
    $0 == heading { found = 1; next }
    found && !inside && $0 == fence { inside = 1; next }
    inside && $0 == "```" { exit }
    inside { print }
  ' README.md
}

last_ioredis=""
for entry in "$@"; do
  # The package name, without a version (a scoped name starts with @).
  if [ "${entry:0:1}" = @ ]; then rest="${entry:1}"; pkg="@${rest%%@*}"; else pkg="${entry%%@*}"; fi
  case "$pkg" in
    ioredis) family=ioredis; quick_start='## Quick start (TypeScript)' ;;
    redis) family=node-redis; quick_start='## Quick start with node-redis (TypeScript)' ;;
    iovalkey) family=iovalkey; quick_start='' ;;
    @valkey/valkey-glide) family=glide; quick_start='## On Valkey GLIDE' ;;
    *) echo "unknown client package: $pkg" >&2; exit 2 ;;
  esac
  app="$work/app-${entry//[@\/]/-}"
  mkdir -p "$app/src"
  cp tools/consumer/package.json tools/consumer/tsconfig.json "$app/"
  cp tools/consumer/"$family"/* "$app/src/"
  if [ -n "$quick_start" ]; then
    readme_block "$quick_start" '```ts' >"$app/src/readme-quick-start.ts"
    [ -s "$app/src/readme-quick-start.ts" ] || { echo "README block not found: $quick_start" >&2; exit 1; }
  fi
  (
    cd "$app"
    npm install --no-audit --no-fund --loglevel=error "$tarball" "$entry" "@types/node@20" "typescript@$typescript"
    installed="$(node -p "require('./node_modules/$pkg/package.json').version")"
    npx --no-install tsc -p tsconfig.json || { echo "consumer type-check: $pkg $installed (asked: $entry): FAILED" >&2; exit 1; }
    # Only this client is installed: loading rlock must not need another.
    for other in ioredis redis @redis/client iovalkey @valkey/valkey-glide; do
      if [ "$other" != "$pkg" ] && [ -d "node_modules/$other" ] && [ "$other/$pkg" != "@redis/client/redis" ]; then
        echo "consumer app for $pkg has $other installed too" >&2
        exit 1
      fi
    done
    node -e "const m = require('rlock'); if (typeof m.LockClient !== 'function') process.exit(1)"
    node --input-type=module -e "const m = await import('rlock'); if (typeof m.LockClient !== 'function') process.exit(1)"
    if [ "$family" = glide ]; then
      echo "consumer: $pkg $installed (asked: $entry): type-checks, loads with import and require"
      exit 0
    fi
    # The CLI opens its own connection with the one client there is.
    # Exit 1 (nothing found) on an empty server; 3 would be a connection it could not open.
    status=0
    npx --no-install rlock list --url "redis://127.0.0.1:$port" >/dev/null 2>&1 || status=$?
    [ "$status" -le 1 ] || { echo "rlock list with only $pkg installed: exit $status" >&2; exit 1; }
    echo "consumer: $pkg $installed (asked: $entry): type-checks, loads with import and require, runs the rlock command"
  )
  [ "$pkg" = ioredis ] && last_ioredis="$app"
done

# The JavaScript quick start runs as written, against a Redis of its own (new Redis() → its port).
if [ -n "$last_ioredis" ]; then
  readme_block '## Quick start (JavaScript)' '```js' >"$last_ioredis/readme-quick-start.mjs"
  [ -s "$last_ioredis/readme-quick-start.mjs" ] || { echo "README JavaScript quick start not found" >&2; exit 1; }
  cd "$last_ioredis"
  sed "s|new Redis()|new Redis('redis://127.0.0.1:$port')|" readme-quick-start.mjs >readme-quick-start.run.mjs
  node readme-quick-start.run.mjs
  echo "README JavaScript quick start: ran"
fi
cd "$root"
