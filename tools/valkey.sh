#!/usr/bin/env bash
# Fetches Valkey 8 (valkey-server, valkey-cli) from Debian's bookworm-backports into .cache/valkey
# and prints the path of its valkey-server, for RLOCK_TEST_SERVER (tools/redis-server.ts). Nothing
# is installed: the packages are downloaded with an apt configuration of their own
# (tools/apt-download.sh: the backports suite on the mirror the machine's apt sources already
# name, lists in a temporary folder) and unpacked with `dpkg -x`, so the system's apt state and
# its redis-server stay as they were. A folder already there is reused. Valkey runs Sentinel as
# `valkey-server --sentinel`.
# Usage: RLOCK_TEST_SERVER="$(bash tools/valkey.sh)" npx vitest run ...
set -euo pipefail
cd "$(dirname "$0")/.."
dest="$PWD/.cache/valkey"
server="$dest/usr/bin/valkey-server"
major=8

if [ -x "$server" ] && "$server" --version | grep -q "v=$major\."; then
  echo "$server"
  exit 0
fi

# shellcheck source=tools/apt-download.sh
. tools/apt-download.sh
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC1091
codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
apt_download "$codename-backports" "$work/debs" valkey-server valkey-tools

rm -rf "$dest.partial"
mkdir -p "$dest.partial"
for deb in "$work"/debs/*.deb; do dpkg -x "$deb" "$dest.partial"; done
rm -rf "$dest"
mv "$dest.partial" "$dest"

# Its shared libraries (jemalloc, lzf) come with the system's redis-server; say so if absent.
missing="$(ldd "$server" | awk '/not found/ { print $1 }')"
if [ -n "$missing" ]; then
  echo "valkey.sh: $server needs libraries this machine lacks: $missing (apt-get install -y libjemalloc2 liblzf1)" >&2
  exit 1
fi
"$server" --version | grep -q "v=$major\." || { echo "valkey.sh: $("$server" --version) is not Valkey $major" >&2; exit 1; }
echo "$server"
