#!/usr/bin/env bash
# Runs before `npm test` (and `npm run bench` for recording-cost): installs the Debian packages the
# tests and benchmarks use, when missing, in one apt-get run. No browser or tool is ever downloaded
# from anywhere but Debian's archive.
#
#   chromium       the browser tests (playwright-core)           CHROMIUM_PATH names another build
#   firefox-esr    the Firefox room test (puppeteer-core, BiDi)   FIREFOX_PATH names another build
#   poppler-utils  pdftotext and pdfimages read session reports back
#   ffmpeg         Safari-shaped MP4 fixtures; frames for the recording-cost benchmark   FFMPEG_PATH
#   tesseract-ocr  reads recorded screens back in the recording-cost benchmark
#
# Installing needs root (or sudo); without it the script names what to install and fails. It never
# skips. Another apt or dpkg run (unattended-upgrades on a fresh machine, a second terminal) may hold
# the package manager's locks; the script waits for them, up to APT_LOCK_TIMEOUT seconds (default
# 300), instead of failing at once.
set -euo pipefail
lock_timeout="${APT_LOCK_TIMEOUT:-300}"
packages=()

# need PACKAGE PATH [VARIABLE]: PACKAGE is wanted when PATH is not an executable. When VARIABLE (the
# name of the setting that chose PATH) is set, a missing PATH is the setting's mistake, not a reason
# to install.
need() {
  local package="$1" path="$2" variable="${3:-}"
  [ -x "$path" ] && return 0
  if [ -n "$variable" ] && [ -n "${!variable:-}" ]; then
    echo "ensure-tools: $variable=$path is not an executable" >&2
    exit 1
  fi
  packages+=("$package")
}

need chromium "${CHROMIUM_PATH:-/usr/bin/chromium}" CHROMIUM_PATH
need firefox-esr "${FIREFOX_PATH:-/usr/bin/firefox-esr}" FIREFOX_PATH
need ffmpeg "${FFMPEG_PATH:-/usr/bin/ffmpeg}" FFMPEG_PATH
need poppler-utils "$(command -v pdftotext || echo /usr/bin/pdftotext)"
need poppler-utils "$(command -v pdfimages || echo /usr/bin/pdfimages)"
need tesseract-ocr "$(command -v tesseract || echo /usr/bin/tesseract)"
if [ "${#packages[@]}" -eq 0 ]; then
  exit 0
fi
# Each package once, in a stable order.
mapfile -t packages < <(printf '%s\n' "${packages[@]}" | sort -u)

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-tools: ${packages[*]} missing and no apt-get; install them yourself" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != "0" ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "ensure-tools: installing ${packages[*]} needs root: run 'apt-get install ${packages[*]}' as root" >&2
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
      echo "ensure-tools: another apt or dpkg is running; waiting for it to finish" >&2
      sleep 5
      continue
    fi
    printf '%s\n' "$output" >&2
    return "$status"
  done
}

echo "ensure-tools: installing Debian's ${packages[*]} (a minute or two)" >&2
export DEBIAN_FRONTEND=noninteractive
apt_get update -qq
apt_get install -y -qq "${packages[@]}"
# tesseract needs its English model (Debian's tesseract-ocr recommends, not depends on, it).
if ! tesseract --list-langs 2>/dev/null | grep -qx eng; then
  apt_get install -y -qq tesseract-ocr-eng
fi
for tool in "${CHROMIUM_PATH:-/usr/bin/chromium}" "${FIREFOX_PATH:-/usr/bin/firefox-esr}" \
  "${FFMPEG_PATH:-/usr/bin/ffmpeg}" pdftotext pdfimages tesseract; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "ensure-tools: installed ${packages[*]}, but $tool is still missing" >&2
    exit 1
  fi
done
echo "ensure-tools: installed ${packages[*]}" >&2
