#!/usr/bin/env bash
# Runs before `npm test`: the candidate-room tests drive Debian's Chromium (package `chromium`) with
# playwright-core; no browser is ever downloaded. The session report tests read PDFs back with
# poppler's pdftotext and pdfimages (package `poppler-utils`). Installs what is missing, which
# needs root (run as root, or with sudo available); fails loudly (never skips) when it cannot.
# Without root: install `chromium` and `poppler-utils` yourself, or set CHROMIUM_PATH to a
# Chromium build you have.
#
# Another apt or dpkg run (unattended-upgrades on a fresh machine, a second terminal) holds the
# package manager's locks; this script waits for them, up to APT_LOCK_TIMEOUT seconds (default 300),
# instead of failing at once.
set -euo pipefail
path="${CHROMIUM_PATH:-/usr/bin/chromium}"
lock_timeout="${APT_LOCK_TIMEOUT:-300}"
packages=()
if [ ! -x "$path" ]; then
  if [ -n "${CHROMIUM_PATH:-}" ]; then
    echo "ensure-chromium: CHROMIUM_PATH=$path is not an executable" >&2
    exit 1
  fi
  packages+=(chromium)
fi
if ! command -v pdftotext >/dev/null 2>&1 || ! command -v pdfimages >/dev/null 2>&1; then
  packages+=(poppler-utils)
fi
if [ "${#packages[@]}" -eq 0 ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: ${packages[*]} missing and no apt-get; install them (or set CHROMIUM_PATH)" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != "0" ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "ensure-chromium: installing ${packages[*]} needs root: run 'apt-get install ${packages[*]}'" \
      "as root (or set CHROMIUM_PATH to a Chromium you have)" >&2
    exit 1
  fi
  sudo="sudo"
fi

# Runs `apt-get ARGS`, waiting while another process holds the package manager's locks. apt waits
# for the dpkg lock itself with DPkg::Lock::Timeout; the lists lock that `update` takes is not
# covered by that option on every apt release, so a lock failure is also retried here until the
# same deadline.
apt_get() {
  local deadline=$((SECONDS + lock_timeout)) output status
  while :; do
    set +e
    output="$($sudo apt-get -o DPkg::Lock::Timeout="$lock_timeout" "$@" 2>&1)"
    status=$?
    set -e
    if [ "$status" -eq 0 ]; then
      return 0
    fi
    if grep -qiE 'could not get lock|unable to (acquire|lock)' <<<"$output" && [ "$SECONDS" -lt "$deadline" ]; then
      echo "ensure-chromium: another apt or dpkg is running; waiting for it to finish" >&2
      sleep 5
      continue
    fi
    printf '%s\n' "$output" >&2
    return "$status"
  done
}

echo "ensure-chromium: installing Debian's ${packages[*]} (about a minute)" >&2
export DEBIAN_FRONTEND=noninteractive
apt_get update -qq
apt_get install -y -qq "${packages[@]}"
if ! command -v pdftotext >/dev/null 2>&1; then
  echo "ensure-chromium: poppler-utils installed but pdftotext is missing" >&2
  exit 1
fi
if [ ! -x "$path" ]; then
  echo "ensure-chromium: chromium installed but $path is missing" >&2
  exit 1
fi
echo "ensure-chromium: $("$path" --version 2>/dev/null || echo chromium installed)" >&2
