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
# What Godot 4 itself says of that copy, where a Godot 4 is installed (--godot, GODOT4, or godot4 / godot on
# PATH; ./scripts/install-godot.sh makes one on Debian): without one it says how to point at one.
gd-assets verify dodge-godot3 || true
