# Sourced by tools/valkey.sh and tools/redis8.sh: downloads Debian packages of another suite
# without touching the system's apt state. `apt_download SUITE DIR PACKAGE...` fetches the .deb
# files of PACKAGE... (no dependencies) from SUITE into DIR, with an apt configuration of its own:
# the suite on the mirror the machine's apt sources already name for its own release, lists and
# cache in a temporary folder that is removed afterwards. Nothing is installed or configured.
# shellcheck shell=bash

# The mirror serving the release's own suite, from deb822 .sources files or one-line lists.
debian_mirror() {
  local codename mirror
  # shellcheck disable=SC1091
  codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
  [ -n "$codename" ] || { echo "apt-download: no VERSION_CODENAME in /etc/os-release (a Debian machine is expected)" >&2; return 1; }
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
  [ -n "$mirror" ] || { echo "apt-download: no apt source names the $codename suite" >&2; return 1; }
  echo "$mirror"
}

apt_download() {
  local suite="$1" into="$2" mirror work keyring signed rc=0
  shift 2
  mirror="$(debian_mirror)" || return 1
  work="$(mktemp -d)"
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$into"
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  signed=""
  [ -f "$keyring" ] && signed="[signed-by=$keyring] "
  echo "deb ${signed}$mirror $suite main" >"$work/sources.list"
  local apt_opts=(
    -q -o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
    # A snapshot mirror serves Release files past their Valid-Until date.
    -o Acquire::Check-Valid-Until=false
  )
  # As root apt drops to the _apt user, who cannot write into these private folders.
  [ "$(id -u)" -eq 0 ] && apt_opts+=(-o APT::Sandbox::User=root)
  echo "apt-download: $* from $mirror $suite" >&2
  { apt-get "${apt_opts[@]}" update >&2 && (cd "$into" && apt-get "${apt_opts[@]}" download "$@" >&2); } || rc=$?
  rm -rf "$work"
  return "$rc"
}
