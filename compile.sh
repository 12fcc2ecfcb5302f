#!/usr/bin/env bash
# Build dist/lettuce: one executable for this platform with Bun, the parse
# worker, sqlite-vec and the built-in embedding model (its weights, vocabulary
# and TensorFlow.js wasm files, imported as files by
# lib/providers/builtin-assets.ts) inside. Runs offline.
set -euo pipefail
cd "$(dirname "$0")"
BUN=./node_modules/.bin/bun
[ -x "$BUN" ] || { echo "compile.sh: run 'npm ci' first" >&2; exit 1; }
mkdir -p dist
# Workers are extra entry points: Bun embeds each under /$bunfs/root/<source
# path>, where parse-pool.ts and builtin.ts look for them at run time.
"$BUN" build --compile --minify --sourcemap=none \
  ./main.ts ./lib/index/parse-worker.ts ./lib/index/fts-writer.ts ./lib/providers/builtin-worker.ts ./lib/offload/worker.ts \
  --outfile dist/lettuce
echo "built dist/lettuce ($(du -h dist/lettuce | cut -f1))"
