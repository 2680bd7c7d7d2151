#!/usr/bin/env bash
# Install, then run the main job on the bundled examples (Godot 3 and Godot 4 projects).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh
. .venv/bin/activate
for project in examples/dodge-godot3 examples/dodge-godot4; do
  gd-assets fragments "$project"
  echo
done
