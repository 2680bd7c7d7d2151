#!/usr/bin/env bash
# Install, then run the test suite: ruff, then pytest. Tests read ../shared/ when it is next to the
# checkout and skip with a reason when it is not. The corpus is built once per session (a few minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh
. .venv/bin/activate
export VLLM_CPU_KVCACHE_SPACE=1 VLLM_ENABLE_V1_MULTIPROCESSING=0
ruff check gd_assets corpora_build tests bench eval
python -m pytest -q -ra --durations=15 "$@"
