#!/usr/bin/env bash
# Runs before `npm test`: the candidate-room tests drive Debian's Chromium (package `chromium`) with
# playwright-core; no browser is ever downloaded. Installs the package when it is missing (as root,
# or through sudo); fails loudly (never skips) when it cannot. CHROMIUM_PATH names another build.
set -euo pipefail
path="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ -x "$path" ]; then
  exit 0
fi
if [ -n "${CHROMIUM_PATH:-}" ]; then
  echo "ensure-chromium: CHROMIUM_PATH=$path is not an executable" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: $path not found and no apt-get; install Chromium, or set CHROMIUM_PATH" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != "0" ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "ensure-chromium: $path not found; run 'apt-get install chromium' as root" >&2
    exit 1
  fi
  sudo="sudo"
fi
echo "ensure-chromium: installing Debian's chromium package (about a minute)" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq chromium >/dev/null
if [ ! -x "$path" ]; then
  echo "ensure-chromium: chromium installed but $path is missing" >&2
  exit 1
fi
echo "ensure-chromium: $("$path" --version 2>/dev/null || echo chromium installed)" >&2
