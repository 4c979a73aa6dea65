#!/usr/bin/env bash
# Type-checks tools/consumer (an ESM + CJS TypeScript app) against the packed rlock, once per
# supported ioredis: the app installs the tarball and its own ioredis, as a user would, and
# `tsc` must accept `new LockClient(new Redis())` and the rest with each. The README's
# TypeScript quick start is type-checked with it, and its JavaScript quick start is run (on the
# last ioredis) against a redis-server started here.
# Usage: tools/check-consumers.sh [ioredis version or range ...]   (default: 5.9.0 5 6)
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
versions=("$@")
if [ "${#versions[@]}" -eq 0 ]; then versions=(5.9.0 5 6); fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

[ -f dist/index.js ] || npm run build
tarball="$work/$(npm pack --ignore-scripts --silent --pack-destination "$work")"
typescript="$(node -p "require('./node_modules/typescript/package.json').version")"

cp -R tools/consumer "$work/app"
# The README's quick starts: the fenced block after each heading.
readme_block() {
  awk -v heading="$1" -v fence="$2" '
    $0 == heading { found = 1; next }
    found && !inside && $0 == fence { inside = 1; next }
    inside && $0 == "```" { exit }
    inside { print }
  ' README.md
}
readme_block '## Quick start (TypeScript)' '```ts' >"$work/app/src/readme-quick-start.ts"
readme_block '## Quick start (JavaScript)' '```js' >"$work/app/readme-quick-start.mjs"
for file in "$work/app/src/readme-quick-start.ts" "$work/app/readme-quick-start.mjs"; do
  [ -s "$file" ] || { echo "README quick start not found for $file" >&2; exit 1; }
done
cd "$work/app"
npm install --no-audit --no-fund --loglevel=error "$tarball" "ioredis@${versions[0]}" "@types/node@20" "typescript@$typescript"

for version in "${versions[@]}"; do
  npm install --no-audit --no-fund --loglevel=error "ioredis@$version"
  installed="$(node -p "require('./node_modules/ioredis/package.json').version")"
  if npx --no-install tsc -p tsconfig.json; then
    echo "consumer type-check: ioredis $installed (asked: $version): ok"
  else
    echo "consumer type-check: ioredis $installed (asked: $version): FAILED" >&2
    exit 1
  fi
done

# The JavaScript quick start runs as written, against a Redis of its own (new Redis() → REDIS_URL).
port="$(node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")"
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no >"$work/redis.log" 2>&1 &
redis_pid=$!
trap 'kill "$redis_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
sed "s|new Redis()|new Redis('redis://127.0.0.1:$port')|" readme-quick-start.mjs >readme-quick-start.run.mjs
node readme-quick-start.run.mjs
echo "README JavaScript quick start: ran"
cd "$root"
