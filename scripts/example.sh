#!/usr/bin/env bash
# Install, build the Godot 3/4 reference corpus once, then run the main job on the bundled examples.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh
. .venv/bin/activate
# The corpus comes from ../shared/corpus when it is next to the checkout, else from Debian's
# source packages (or GitHub): `gd-assets corpus build` picks (auto) and skips what is unchanged.
if [ -d ../shared/corpus ]; then source=../shared/corpus; else source=auto; fi
gd-assets corpus build --source "$source"
for project in examples/dodge-godot3 examples/dodge-godot4; do
  gd-assets analyze "$project"
  echo
done
# The Godot 4 copy of the Godot 3 example (analysed above, so only the copy is written), and its patch.
gd-assets migrate examples/dodge-godot3
# What Godot itself says of that copy, and the game run: the copy's main scene in Godot 4 beside the original
# in Godot 3.6, in a sandbox (--godot / GODOT4, --godot3 / GODOT3, or on PATH; ./scripts/install-godot.sh
# installs both on Debian). Without the engines, one line says the run was skipped and how to get them.
if python -c "from gd_assets.core.engines import find_godot; find_godot()" 2>/dev/null; then
  gd-assets verify dodge-godot3 --run
else
  echo "verify and the game run skipped: no Godot 4 here (./scripts/install-godot.sh installs Godot 4 and 3.6 on Debian, or set GODOT4 and GODOT3)"
fi
