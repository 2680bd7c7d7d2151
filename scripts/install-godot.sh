#!/usr/bin/env bash
# Godot 4 for `gd-assets verify` and its tests, where no Godot 4 is installed: Debian sid's `godot`
# package in a debootstrap root (Debian bookworm has none), run through the root's own loader by a
# small wrapper. Built once under the test cache (GD_ASSETS_TEST_CACHE, default ~/.cache/gd-assets-tests)
# and reused; prints the wrapper's path (pass it as --godot or GODOT4). Needs root and the Debian
# mirror this system already uses; about a minute and 750 MB.
set -euo pipefail
cache="${GD_ASSETS_TEST_CACHE:-$HOME/.cache/gd-assets-tests}"
root="$cache/godot-sid"
wrapper="$cache/godot4"
case "$(uname -m)" in
  x86_64) loader="usr/lib64/ld-linux-x86-64.so.2"; libs="usr/lib/x86_64-linux-gnu" ;;
  aarch64) loader="usr/lib/ld-linux-aarch64.so.1"; libs="usr/lib/aarch64-linux-gnu" ;;
  *) echo "install-godot: no recipe for $(uname -m)" >&2; exit 1 ;;
esac
if [ -x "$wrapper" ] && "$wrapper" --headless --version </dev/null 2>/dev/null | grep -q '^4\.'; then
  echo "$wrapper"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "install-godot: debootstrap needs root; install Godot 4 yourself and set GODOT4" >&2
  exit 1
fi
uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
[ -n "$uri" ] || uri=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$uri" ] || { echo "install-godot: no Debian mirror in /etc/apt" >&2; exit 1; }
command -v debootstrap >/dev/null || { apt-get update -q >/dev/null; apt-get install -y -q debootstrap >/dev/null; }
building="$root.building-$$"
rm -rf "$building"
mkdir -p "$cache"
trap 'umount "$building/proc" 2>/dev/null || true; rm -rf "$building"' EXIT
debootstrap --variant=minbase --include=ca-certificates sid "$building" "$uri" >/dev/null
cp /etc/resolv.conf "$building/etc/resolv.conf"
chroot "$building" apt-get -q -o Acquire::Check-Valid-Until=false update >/dev/null
mount -t proc proc "$building/proc"
DEBIAN_FRONTEND=noninteractive chroot "$building" apt-get -q -o Acquire::Check-Valid-Until=false \
  install -y --no-install-recommends godot >/dev/null
umount "$building/proc"
rm -rf "$root"
mv "$building" "$root"
trap - EXIT
cat > "$wrapper" <<EOF
#!/bin/sh
# Debian sid's Godot 4, run through its root's own loader (made by scripts/install-godot.sh).
R="$root"
exec "\$R/$loader" --library-path "\$R/$libs:\$R/$libs/pulseaudio" "\$R/usr/bin/godot" "\$@"
EOF
chmod +x "$wrapper"
"$wrapper" --headless --version </dev/null | grep -q '^4\.' || { echo "install-godot: $wrapper does not run" >&2; exit 1; }
echo "$wrapper"
