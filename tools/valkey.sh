#!/usr/bin/env bash
# Fetches Valkey 8 (valkey-server, valkey-cli) from Debian's bookworm-backports into .cache/valkey
# and prints the path of its valkey-server, for RLOCK_TEST_SERVER (tools/redis-server.ts). Nothing
# is installed: the packages are downloaded with an apt configuration of this script's own (the
# backports suite on the mirror the machine's apt sources already name, lists in a temporary
# folder) and unpacked with `dpkg -x`, so the system's apt state and its redis-server stay as they
# were. A folder already there is reused. Valkey runs Sentinel as `valkey-server --sentinel`.
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

# shellcheck disable=SC1091
codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
[ -n "$codename" ] || { echo "valkey.sh: no VERSION_CODENAME in /etc/os-release (a Debian machine is expected)" >&2; exit 1; }

# The mirror serving the release's own suite, from deb822 .sources files or one-line lists.
# (A missing file or an early `head` fails the pipe; only an empty answer counts.)
mirror="$(
  {
    cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v want="$codename" '
      /^[[:space:]]*$/ { if (uris != "" && suites ~ ("(^| )" want "( |$)")) print uris; uris = ""; suites = ""; next }
      /^URIs:/ { sub(/^URIs:[[:space:]]*/, ""); uris = $1 }
      /^Suites:/ { sub(/^Suites:[[:space:]]*/, ""); suites = $0 }
      END { if (uris != "" && suites ~ ("(^| )" want "( |$)")) print uris }'
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | sed 's/\[[^]]*\]//' |
      awk -v want="$codename" '$1 == "deb" && $3 == want { print $2 }'
  } | head -n 1
)" || true
[ -n "$mirror" ] || { echo "valkey.sh: no apt source names the $codename suite" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
signed=""
[ -f "$keyring" ] && signed="[signed-by=$keyring] "
echo "deb ${signed}$mirror $codename-backports main" >"$work/sources.list"
apt_opts=(
  -q -o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
)
# As root apt drops to the _apt user, who cannot write into this script's private folders.
[ "$(id -u)" -eq 0 ] && apt_opts+=(-o APT::Sandbox::User=root)

echo "valkey.sh: downloading valkey-server $major from $mirror $codename-backports" >&2
apt-get "${apt_opts[@]}" update >&2
(cd "$work/debs" && apt-get "${apt_opts[@]}" download valkey-server valkey-tools >&2)

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
