#!/usr/bin/env bash
# Create .venv and install gd-assets with CPU PyTorch (pinned first so no CUDA build is pulled in).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
. .venv/bin/activate
pip install -q --upgrade pip
pip install -q torch==2.13.0
pip install -q -e ".[dev]"
