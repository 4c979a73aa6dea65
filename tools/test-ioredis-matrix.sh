#!/usr/bin/env bash
# Runs the test suite once per supported ioredis besides the lockfile's (which `npm test`
# covers): each version is installed with --no-save, and the lockfile's is put back at the end.
# Usage: tools/test-ioredis-matrix.sh [ioredis version or range ...]   (default: 5.9.0 5 6)
set -euo pipefail
cd "$(dirname "$0")/.."
versions=("$@")
if [ "${#versions[@]}" -eq 0 ]; then versions=(5.9.0 5 6); fi

installed_version() { node -p "require('./node_modules/ioredis/package.json').version"; }
locked="$(node -p "require('./package-lock.json').packages['node_modules/ioredis'].version")"
restore() { npm install --no-save --no-audit --no-fund --loglevel=error "ioredis@$locked" >/dev/null; }
trap restore EXIT

results="$(mktemp -d)"
summary=()
for version in "${versions[@]}"; do
  npm install --no-save --no-audit --no-fund --loglevel=error "ioredis@$version"
  installed="$(installed_version)"
  if [ "$installed" = "$locked" ]; then
    summary+=("ioredis $installed (asked: $version): the lockfile's version, tested by npm test")
    continue
  fi
  echo "== tests on ioredis $installed (asked: $version)"
  out="$results/$installed.json"
  # The suite's verdict is read from its JSON report below, so a failure there still reports.
  npx --no-install vitest run --reporter=dot --reporter=json --outputFile="$out" || true
  line="$(node -e "
    const fs = require('fs');
    if (!fs.existsSync(process.argv[1])) { console.log('no report'); process.exit(1); }
    const r = JSON.parse(fs.readFileSync(process.argv[1], 'utf8'));
    console.log(r.numPassedTests + ' passed, ' + r.numFailedTests + ' failed');
    if (r.numTotalTests === 0 || r.numFailedTests > 0 || !r.success) process.exit(1);
  " "$out")" || { echo "tests on ioredis $installed: $line" >&2; exit 1; }
  summary+=("ioredis $installed (asked: $version): $line")
done
printf 'tests per ioredis version: %s\n' "${summary[@]}"
