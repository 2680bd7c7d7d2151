#!/usr/bin/env bash
# Install, then run the test suite (tests read ../shared/ when it is there and skip with a reason when not).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh
. .venv/bin/activate
ruff check gd_assets corpora_build tests bench
python -m pytest -q -ra "$@"
