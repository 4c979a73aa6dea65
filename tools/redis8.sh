#!/usr/bin/env bash
# Fetches Redis 8.0 (redis-server, redis-cli) from Debian trixie into .cache/redis8 and prints the
# path of a redis-server that runs it, for RLOCK_TEST_SERVER (tools/redis-server.ts). Nothing is
# installed: the packages are downloaded with an apt configuration of their own
# (tools/apt-download.sh: the trixie suite on the mirror the machine's apt sources already name,
# lists in a temporary folder) and unpacked with `dpkg -x`, so the system's apt state and its
# redis-server stay as they were. A folder already there is reused.
#
# Trixie's binaries need its glibc (2.41) and libstdc++, newer than an older release's: they are
# unpacked beside them and run through trixie's own loader,
#   ld-linux --argv0 redis-server --library-path <root>/usr/lib/<triplet> <root>/usr/bin/redis-check-rdb …
# (the package's redis-server is a link to redis-check-rdb; Redis picks its mode from argv[0]).
# .cache/redis8/bin/redis-server and redis-cli are scripts that do so; tools/redis-cluster.ts
# finds redis-cli beside redis-server, and Sentinel runs as `redis-server --sentinel`.
# Usage: RLOCK_TEST_SERVER="$(bash tools/redis8.sh)" npx vitest run ...
set -euo pipefail
cd "$(dirname "$0")/.."
dest="$PWD/.cache/redis8"
server="$dest/bin/redis-server"
major=8
suite=trixie
# redis-server (the link) and redis-tools (the binaries), and the libraries they load that an
# older release has too old or not at all (ldd-checked below).
packages=(
  redis-server redis-tools
  libc6 libgcc-s1 libstdc++6 libatomic1 libjemalloc2 liblzf1 libssl3t64 libsystemd0 libcap2 libzstd1 zlib1g
)

if [ -x "$server" ] && "$server" --version 2>/dev/null | grep -q "v=$major\."; then
  echo "$server"
  exit 0
fi

# shellcheck source=tools/apt-download.sh
. tools/apt-download.sh
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
apt_download "$suite" "$work/debs" "${packages[@]}"

rm -rf "$dest.partial"
mkdir -p "$dest.partial/bin"
for deb in "$work"/debs/*.deb; do dpkg -x "$deb" "$dest.partial/root"; done

# The loader and the library folder of this architecture (x86_64-linux-gnu, aarch64-linux-gnu, …).
loader="$(find "$dest.partial/root/usr/lib" -maxdepth 2 -name 'ld-linux*.so.*' | head -n 1)"
[ -n "$loader" ] || { echo "redis8.sh: no ld-linux loader in the unpacked libc6" >&2; exit 1; }
libdir="$(dirname "$loader")"
loader="${loader#"$dest.partial/"}"
libdir="${libdir#"$dest.partial/"}"

# One script per program, each finding the root from its own folder (the folder may move).
wrapper() {
  local name="$1" binary="$2"
  cat >"$dest.partial/bin/$name" <<EOF
#!/bin/sh
# $name 8 from Debian $suite, through its own loader and libraries (tools/redis8.sh).
here="\$(cd "\$(dirname "\$0")/.." && pwd)"
exec "\$here/$loader" --argv0 $name --library-path "\$here/$libdir" "\$here/root/usr/bin/$binary" "\$@"
EOF
  chmod +x "$dest.partial/bin/$name"
}
wrapper redis-server redis-check-rdb
wrapper redis-cli redis-cli

# Every library the binaries load comes from the unpacked root, none from the system.
for binary in redis-check-rdb redis-cli; do
  listed="$("$dest.partial/$loader" --list --library-path "$dest.partial/$libdir" "$dest.partial/root/usr/bin/$binary")"
  outside="$(echo "$listed" | awk -v root="$dest.partial/" '/=>/ && index($3, root) != 1 { print $1 }')"
  [ -z "$outside" ] || { echo "redis8.sh: $binary needs libraries not unpacked: $outside" >&2; exit 1; }
done

rm -rf "$dest"
mv "$dest.partial" "$dest"
"$server" --version | grep -q "v=$major\." || { echo "redis8.sh: $("$server" --version) is not Redis $major" >&2; exit 1; }
"$dest/bin/redis-cli" --version >&2
echo "$server"
