#!/usr/bin/env bash
# Installs what meTile needs and is missing: Debian packages, then a Python virtual
# environment in .venv with the PyPI packages of requirements-dev.txt. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

debian_packages=(
  build-essential cmake ninja-build clang-format python3-venv
  libboost-context-dev libboost-graph-dev liblemon-dev nlohmann-json3-dev
  libgtest-dev llvm-14-tools
  clang libclang-rt-14-dev  # the fuzz smoke test (scripts/fuzz.sh --smoke): clang's libFuzzer
)
missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  python3 -m venv .venv
fi
stamp=.venv/.requirements-installed
if [ ! -f "$stamp" ] || ! cmp -s requirements-dev.txt "$stamp"; then
  echo "setup: installing Python packages from requirements-dev.txt"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r requirements-dev.txt
  cp requirements-dev.txt "$stamp"
fi
