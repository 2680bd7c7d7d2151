#!/usr/bin/env bash
# Install, then run the test suite: ruff, then pytest. Tests read ../shared/ when it is next to the
# checkout, else the worked example under tests/ and a corpus from Debian's source packages. The corpus
# is built once per key (about a minute), and Godot 4 and 3.6 for the verify tests once per machine (about a minute).
set -euo pipefail
cd "$(dirname "$0")/.."
# Godot 4 for the verify tests (Debian sid's package in a root under the test cache, built once), built
# while pip installs: one waits on the network and unpacks packages as much as the other.
if [ -z "${GODOT4:-}" ]; then
  godot_out=$(mktemp) godot_log=$(mktemp)
  ./scripts/install-godot.sh >"$godot_out" 2>"$godot_log" &
  godot_pid=$!
fi
./scripts/install.sh
# When Godot 4 cannot be had, its reason goes to the tests, which fail with it instead of skipping.
if [ -n "${godot_pid:-}" ]; then
  if wait "$godot_pid"; then
    export GODOT4="$(cat "$godot_out")"
    export GODOT3="${GODOT3:-$(dirname "$GODOT4")/godot3}"
  else
    export GD_ASSETS_GODOT_MISSING="scripts/install-godot.sh failed: $(tail -n 3 "$godot_log" | tr '\n' ' ')"
  fi
  rm -f "$godot_out" "$godot_log"
fi
# Games run in a sandbox (`verify --run`): bubblewrap, else util-linux's unshare.
if ! command -v bwrap >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get update -q >/dev/null && apt-get install -y -q bubblewrap >/dev/null || echo "no bubblewrap: the run tests use unshare"
fi
# The many-machines tests start a Redis broker (`gd-assets broker start`): Debian's redis-server.
if ! command -v redis-server >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get update -q >/dev/null && apt-get install -y -q redis-server >/dev/null || echo "no redis-server: the broker tests fail"
fi
# The Postgres tests start their own cluster with `gd-assets db start`: it needs the server programs.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null; then
  if [ "$(id -u)" = 0 ]; then apt-get update -q >/dev/null && apt-get install -y -q postgresql >/dev/null; else echo "no PostgreSQL: its tests skip"; fi
fi
. .venv/bin/activate
export VLLM_CPU_KVCACHE_SPACE=1 VLLM_ENABLE_V1_MULTIPROCESSING=0
ruff check gd_assets corpora_build tests bench eval
# The test corpus and the tiny chat model, built side by side before the suite (once per key, in the test
# cache): inside it, the first test needing one builds it while the other processes wait.
python tests/prepare.py
# The suite on several processes (pytest-xdist): part of it waits on Dagster's daemon, servers and
# subprocesses, so it runs one more process than there are cores (at most 8). The slow tests are handed
# out first; tests of one group (`xdist_group`: one vLLM server, the UI's backfill daemon) run in one
# process (tests/conftest.py). GD_ASSETS_TEST_PROCESSES=0: one process.
processes=${GD_ASSETS_TEST_PROCESSES:-$(( $(nproc) + 1 < 8 ? $(nproc) + 1 : 8 ))}
python -m pytest -q -ra --durations=15 -n "$processes" --dist loadgroup "$@"
