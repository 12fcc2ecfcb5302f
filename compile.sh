#!/usr/bin/env bash
# Build dist/lettuce: one executable for this platform with Bun, the parse
# worker and sqlite-vec inside. Runs offline.
set -euo pipefail
cd "$(dirname "$0")"
BUN=./node_modules/.bin/bun
[ -x "$BUN" ] || { echo "compile.sh: run 'npm ci' first" >&2; exit 1; }
mkdir -p dist
# The worker is a second entry point: Bun embeds it and resolves
# new Worker(new URL("./parse-worker.ts", import.meta.url)) to it at run time.
"$BUN" build --compile --minify --sourcemap=none \
  ./main.ts ./lib/index/parse-worker.ts \
  --outfile dist/lettuce
echo "built dist/lettuce ($(du -h dist/lettuce | cut -f1))"
