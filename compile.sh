#!/usr/bin/env bash
# Build Lettuce executables with `bun build --compile`: one file each, carrying
# Bun, the parse, full-text and read workers, the built-in embedding model (imported
# as files by lib/providers/builtin-assets.ts), the target's sqlite-vec build,
# for this machine's Linux target the freshness walk built by its C compiler,
# and any asset folder listed below.
#
#   ./compile.sh               this machine's binary, quickly: dist/lettuce
#   ./compile.sh TARGET…       dist/lettuce-<version>-TARGET[.exe] and dist/SHA256SUMS
#   ./compile.sh --all         every target (npm run release)
# (LETTUCE_DIST=DIR writes to DIR instead of dist/.)
#
# Targets: linux-x64 linux-arm64 darwin-x64 darwin-arm64 windows-x64 linux-x64-musl.
# Cross builds need the npm registry the first time: Bun fetches the target's
# runtime, and the target's sqlite-vec package (sqlite-vec-<os>-<arch>, checked
# against package-lock.json's integrity) is fetched with `npm pack` into
# $LETTUCE_BUILD_CACHE (default ~/.cache/lettuce-build), never into the repo.
set -euo pipefail
cd "$(dirname "$0")"
BUN="$PWD/node_modules/.bin/bun"
[ -x "$BUN" ] || { echo "compile.sh: run 'npm ci' first" >&2; exit 1; }

ALL_TARGETS=(linux-x64 linux-arm64 darwin-x64 darwin-arm64 windows-x64 linux-x64-musl)
# Workers are extra entry points: Bun embeds each under <virtual root>/<source
# path>, where lib/platform/embedded.ts's workerEntry() finds them.
ENTRIES=(./main.ts ./lib/index/parse-worker.ts ./lib/index/fts-writer.ts ./lib/providers/builtin-worker.ts ./lib/offload/worker.ts ./lib/store/checkpoint-worker.ts ./lib/semantic/cache-writer-worker.ts)
# Folders of files embedded byte for byte (any type: html, js, css, json, images)
# and found at run time by their repo path: embeddedAsset("web/dist/index.html")
# in lib/platform/embedded.ts. Adding one is one line here.
ASSET_DIRS=(
  # web/dist   # the web UI's built assets (branch web-ui), once they exist
)
# LETTUCE_ASSET_DIRS adds folders (space-separated) for one build: the tests use it.
# shellcheck disable=SC2206
[ -n "${LETTUCE_ASSET_DIRS:-}" ] && ASSET_DIRS+=($LETTUCE_ASSET_DIRS)

DIST=${LETTUCE_DIST:-dist}
VERSION=$("$BUN" -e 'console.log(require("./package.json").version)')
CACHE=${LETTUCE_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lettuce-build}
COMMIT=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ "$COMMIT" != unknown ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then COMMIT="$COMMIT-dirty"; fi
# SOURCE_DATE_EPOCH, when set, makes the stamp reproducible.
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
  BUILT=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
else
  BUILT=$(date -u +%Y-%m-%dT%H:%M:%SZ)
fi
DEFINES=(--define "LETTUCE_BUILD_COMMIT=\"$COMMIT\"" --define "LETTUCE_BUILD_DATE=\"$BUILT\"")

host_target() {
  local os arch
  case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; MINGW* | MSYS* | CYGWIN*) os=windows ;; *) os=unknown ;; esac
  case "$(uname -m)" in x86_64 | amd64) arch=x64 ;; aarch64 | arm64) arch=arm64 ;; *) arch=unknown ;; esac
  echo "$os-$arch"
}

# The npm package holding sqlite-vec for a target, and its library's file name.
vec_package() {
  case "$1" in
    linux-x64 | linux-x64-musl) echo "sqlite-vec-linux-x64 vec0.so" ;; # no musl build exists: glibc's, else plain tables
    linux-arm64) echo "sqlite-vec-linux-arm64 vec0.so" ;;
    darwin-x64 | darwin-arm64) echo "sqlite-vec-$1 vec0.dylib" ;;
    windows-x64) echo "sqlite-vec-windows-x64 vec0.dll" ;;
    *) return 1 ;;
  esac
}

# The npm integrity string (sha512-<base64>) of a file.
integrity_of() {
  F="$1" "$BUN" -e 'const b = new Uint8Array(await Bun.file(process.env.F).arrayBuffer()); console.log("sha512-" + require("node:crypto").createHash("sha512").update(b).digest("base64"))'
}

# Print the path of a target's sqlite-vec library: from node_modules when npm
# installed it for this machine, else from the package's tarball, fetched with
# `npm pack` into the cache and checked against package-lock.json's integrity
# on every build (a cache someone changed is fetched again, never trusted).
vec_library() {
  local pkg file
  read -r pkg file < <(vec_package "$1")
  if [ -f "node_modules/$pkg/$file" ]; then echo "node_modules/$pkg/$file"; return; fi
  local ver integrity tgz dir
  read -r ver integrity < <("$BUN" -e "const p = require('./package-lock.json').packages['node_modules/$pkg']; console.log(p ? p.version + ' ' + p.integrity : '')")
  [ -n "$ver" ] || { echo "compile.sh: $pkg is not in package-lock.json" >&2; return 1; }
  mkdir -p "$CACHE" || return 1
  tgz="$CACHE/$pkg-$ver.tgz"
  if [ ! -f "$tgz" ] || [ "$(integrity_of "$tgz")" != "$integrity" ]; then
    local tmp name
    # In the cache's own folder, so that the tarball's move into place is a rename another build never sees half done.
    tmp=$(mktemp -d "$CACHE/.pack.XXXXXX")
    name=$(cd "$tmp" && npm pack "$pkg@$ver" --silent 2>/dev/null | tail -1) && [ -f "$tmp/$name" ] || {
      rm -rf "$tmp"
      echo "compile.sh: could not fetch $pkg@$ver from the npm registry" >&2
      return 1
    }
    if [ "$(integrity_of "$tmp/$name")" != "$integrity" ]; then
      rm -rf "$tmp"
      echo "compile.sh: $pkg@$ver from the registry does not match package-lock.json's integrity" >&2
      return 1
    fi
    mv "$tmp/$name" "$tgz" && rm -rf "$tmp" || return 1
  fi
  dir="$CACHE/$pkg-$ver"
  # Extracted beside it and renamed into place: two builds at once (CI's run beside a fresh clone's) each
  # emptied this folder and extracted anew, and one copied the library in the moment the other had removed it.
  local part
  part=$(mktemp -d "$CACHE/.$pkg-$ver.XXXXXX") || return 1
  tar --no-same-owner -xzf "$tgz" -C "$part" --strip-components=1 "package/$file" || { rm -rf "$part"; return 1; }
  mkdir -p "$dir" && mv -f "$part/$file" "$dir/$file" && rm -rf "$part" || return 1
  echo "$dir/$file"
}

# build TARGET OUTFILE [cross]: a cross build names Bun's target runtime; the host build uses the running Bun.
build() {
  local target=$1 out=$2 cross=${3:-} vec stage assets=() d f enc
  # (Each step checks its own status: `set -e` does not apply inside a function called from `if`.)
  vec=$(vec_library "$target") || return 1
  # Entry points must share the repo as their root (worker paths depend on it): stage the library
  # in the repo's dist/ (ignored by git), wherever the binaries go.
  stage="./dist/.vendor-$target"
  rm -rf "$stage" && mkdir -p "$stage" && cp "$vec" "$stage/" || return 1
  local native=()
  # The CLI's freshness walk (lib/platform/fingerprint-walk.c), built for this machine's Linux target by its
  # C compiler: dlopen'ed, it saves the ~5 ms TinyCC takes to compile it at run time, which other targets do.
  if [ "$target" = "$(host_target)" ] && [ "${target%%-*}" = linux ] && command -v cc >/dev/null; then
    cc -O2 -shared -fPIC -o "$stage/fingerprint-walk.so" lib/platform/fingerprint-walk.c 2>"$stage/cc.log" && native=("$stage/fingerprint-walk.so") ||
      echo "compile.sh: could not build fingerprint-walk.so (the binary compiles it at run time): $(head -3 "$stage/cc.log")" >&2
  fi
  # Each asset is staged as <its path, percent-encoded>.asset: an extension Bun embeds as a plain
  # file (a .js or .html entry point would be bundled), with the path kept in the name.
  for d in ${ASSET_DIRS[@]+"${ASSET_DIRS[@]}"}; do
    [ -d "$d" ] || continue
    mkdir -p "$stage/assets"
    while IFS= read -r f; do
      enc=${f//%/%25}
      enc=${enc//\//%2F}
      cp "$f" "$stage/assets/$enc.asset" || return 1
      assets+=("$stage/assets/$enc.asset")
    done < <(find "$d" -type f | sort)
  done
  # --bytecode: the binary starts without parsing its bundle (`lettuce --version` ~40 ms faster). It makes
  # import.meta.url the source path at build time: lib/platform/embedded.ts goes by Bun.main instead.
  # --splitting (ESM only): the modules a command imports lazily sit in chunks of their own, loaded when
  # imported, so a start loads only what its command needs (`--version` 66 -> 42 ms, min of 15, loaded).
  # Bun's output (and its download progress for a new target runtime) is shown only when the build fails.
  local log="$stage/build.log"
  "$BUN" build --compile --format=esm --splitting --bytecode ${cross:+--target=bun-$target} --minify --sourcemap=none "${DEFINES[@]}" \
    "${ENTRIES[@]}" "$stage/$(basename "$vec")" ${native[@]+"${native[@]}"} ${assets[@]+"${assets[@]}"} --outfile "$out" >"$log" 2>&1 || {
    cat "$log" >&2
    rm -rf "$stage"
    return 1
  }
  rm -rf "$stage"
  echo "built $out ($(du -h "$out" | cut -f1))"
}

# SHA256SUMS covers every release file of this version in dist/ (targets built one at a time add up).
checksums() {
  local files
  files=$(cd "$DIST" && ls "lettuce-$VERSION-"* 2>/dev/null) || return 0
  # shellcheck disable=SC2086
  (cd "$DIST" && if command -v sha256sum >/dev/null; then sha256sum $files; else shasum -a 256 $files; fi) >"$DIST/SHA256SUMS"
  echo "wrote $DIST/SHA256SUMS"
}

mkdir -p "$DIST"
if [ $# -eq 0 ]; then
  build "$(host_target)" "$DIST/lettuce" || exit 1
  exit 0
fi

targets=()
for a in "$@"; do
  case "$a" in
    --all) targets+=("${ALL_TARGETS[@]}") ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) vec_package "$a" >/dev/null || { echo "compile.sh: unknown target $a (targets: ${ALL_TARGETS[*]})" >&2; exit 2; }; targets+=("$a") ;;
  esac
done

for t in "${targets[@]}"; do
  exe="lettuce-$VERSION-$t"
  [ "${t%%-*}" = windows ] && exe="$exe.exe"
  rm -f "$DIST/$exe"
  if ! build "$t" "$DIST/$exe" cross; then
    [ "$t" = linux-x64-musl ] || exit 1
    echo "compile.sh: the musl build failed; skipped (it is optional)" >&2
  fi
done
checksums
