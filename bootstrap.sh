#!/usr/bin/env bash
# hopsim's set-up from a fresh Debian bookworm machine, as root, then one job:
#   bash bootstrap.sh run    install what is missing, run the default scenario
#   bash bootstrap.sh test   install what is missing, run every test (ctest + pytest)
# Safe to re-run: it installs only what is missing and rebuilds incrementally.
set -euo pipefail
cd "$(dirname "$0")"

job="${1:-run}"
case "$job" in run|test) ;; *) echo "usage: bash bootstrap.sh {run|test}" >&2; exit 2 ;; esac

apt_packages=(build-essential cmake ninja-build pkg-config libsimgrid-dev libgtest-dev
              python3 python3-venv python3-dev libboost-dev
              openmpi-bin libopenmpi-dev netpipe-openmpi iproute2
              chromium)  # chromium: tests render report.html headless (tests/test_report_browser.py)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

# Debian's interpreter, so that its headers (python3-dev) match the build.
if [ ! -x .venv/bin/python ]; then
  /usr/bin/python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >&2
# Editable (scikit-build-core's redirect mode): hopsim's Python modules are read from
# this tree, so a test after an edit tests the edit; the compiled parts (the engine,
# hopbench) are rebuilt by re-running this script. Isolation kept: it is cached.
CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
  .venv/bin/python -m pip install -q -e ".[test]" >&2

if [ "$job" = run ]; then
  exec .venv/bin/hopsim run
fi

build_dir="$(ls -d build/*/ | head -n 1)"
ctest --test-dir "$build_dir" --output-on-failure
# The installed package is this tree's Python (editable) and the build's engine. One
# worker per core (pytest-xdist), each test file whole in one worker: the joint fits'
# tests take minutes of one core each, and on 2 cores one process took ~29 minutes.
exec .venv/bin/python -m pytest -q -p no:cacheprovider --rootdir=. -n auto --dist loadfile tests
