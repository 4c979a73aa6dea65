#!/usr/bin/env bash
# Runs rlock on another JavaScript runtime (the `bun` and `deno` devDependencies), against the
# built package (dist/: build first), as an app would:
#   bun   the demo and the examples, then a core subset of the specs with vitest on Bun's runtime
#         (`bun --bun`: the test workers are Bun processes, which spec/runtime.spec.ts checks)
#   deno  the demo and the examples (vitest is not run on Deno)
# Left out: the specs that spawn child processes (programs bundled for Node by
# tools/spec-children.ts), and the OpenTelemetry example.
# Usage: tools/runtime-smoke.sh bun|deno
set -euo pipefail
cd "$(dirname "$0")/.."
runtime="${1:?usage: tools/runtime-smoke.sh bun|deno}"
[ -f dist/index.js ] || { echo "runtime-smoke: build first (npm run build)" >&2; exit 1; }
bin="node_modules/.bin/$runtime"
t0=$SECONDS

# How each runtime runs an example: `rlock` must resolve to dist/ (the root tsconfig's `paths`
# point it at lib/, whose .lua imports only the build and the Node loader hook understand).
case "$runtime" in
  bun) run=("$bin" --tsconfig-override=tools/bun/tsconfig.json) ;;
  # Deno reads no tsconfig `paths`; the examples import tools/*.ts by their .js names.
  deno) run=("$bin" run --allow-all --unstable-sloppy-imports) ;;
  *) echo "runtime-smoke: unknown runtime $runtime (bun or deno)" >&2; exit 2 ;;
esac
echo "$("$bin" --version | head -n 1)"
for example in demo fenced-storage semaphore metrics handoff leader cron; do
  echo "== examples/$example.ts on $runtime"
  "${run[@]}" "examples/$example.ts"
done

if [ "$runtime" = bun ]; then
  SPECS=(
    spec/runtime.spec.ts
    spec/client.spec.ts
    spec/locks/fair-lock.spec.ts spec/locks/fenced.spec.ts spec/locks/read-write.spec.ts
    spec/locks/ownership.spec.ts spec/locks/waiting.spec.ts spec/locks/multi-lock.spec.ts
    spec/synchronizers/semaphore.spec.ts spec/synchronizers/latch.spec.ts
    spec/faults/resend.spec.ts
  )
  RLOCK_TEST_RUNTIME=bun "$bin" --bun x vitest run "${SPECS[@]}"
fi
echo "runtime-smoke $runtime: $((SECONDS - t0)) s"
