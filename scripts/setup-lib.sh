# Sourced by scripts/setup-build.sh and scripts/setup.sh: what both set-ups share (messages,
# Debian prerequisites installed or named with the command that installs them, pinned versions).
# Expects $root (the checkout).
say() { printf '[setup] %s\n' "$*" >&2; }

# Debian packages for the given commands: `command:package ...`.
missing_packages() {
  local pair
  for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null || printf '%s\n' "${pair#*:}"
  done | sort -u | tr '\n' ' '
}
# Installs the Debian packages named, or stops with the command that does.
need_debian_packages() { # WHAT-FOR PACKAGE...
  local what=$1
  shift
  [ $# -gt 0 ] || return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing Debian packages $* ($what)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "$@" >/dev/null
  else
    say "missing for $what: $*"
    say "install them with:  sudo apt-get install -y $*"
    say "then run this again."
    exit 1
  fi
}

tool_version() { # reads `name = "x.y.z"` from [workspace.metadata.tools]
  awk -v key="$1" '
    /^\[workspace\.metadata\.tools\]/ {on=1; next}
    /^\[/ {on=0}
    on && $1 == key { gsub(/"/, "", $3); print $3 }' "$root/Cargo.toml"
}
