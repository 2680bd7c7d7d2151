#!/usr/bin/env bash
# Godot 4 and Godot 3.6 for `gd-assets verify` (`--run` runs the original in Godot 3 beside its copy) and
# its tests, where none is installed: Debian sid's `godot`, `godot3-server` and `godot3-runner` packages
# (the runner is Godot 3's runtime that renders) with Mesa's software renderer in a debootstrap root
# (Debian bookworm has none of them), each run through the root's own loader by a small wrapper, and the
# host's Xvfb for the frames. Built once under the test cache (GD_ASSETS_TEST_CACHE, default
# ~/.cache/gd-assets-tests) and reused; prints the Godot 4 wrapper's path (pass it as --godot or GODOT4);
# the Godot 3 wrappers `godot3` and `godot3-runner` lie beside it (--godot3 or GODOT3; GODOT3_RUNNER).
# Needs root and the Debian mirror this system already uses; about a minute, 900 MB.
set -euo pipefail
cache="${GD_ASSETS_TEST_CACHE:-$HOME/.cache/gd-assets-tests}"
root="$cache/godot-sid"
wrapper="$cache/godot4"
wrapper3="$cache/godot3"
runner3="$cache/godot3-runner"
packages="godot godot3-server godot3-runner libgl1-mesa-dri libglx-mesa0 libegl-mesa0"
case "$(uname -m)" in
  x86_64) loader="usr/lib64/ld-linux-x86-64.so.2"; libs="usr/lib/x86_64-linux-gnu" ;;
  aarch64) loader="usr/lib/ld-linux-aarch64.so.1"; libs="usr/lib/aarch64-linux-gnu" ;;
  *) echo "install-godot: no recipe for $(uname -m)" >&2; exit 1 ;;
esac
write_wrapper() {  # path, program, major
  cat > "$1" <<EOF
#!/bin/sh
# Debian sid's Godot $3, run through its root's own loader (made by scripts/install-godot.sh).
R="$root"
export LIBGL_DRIVERS_PATH="\$R/$libs/dri" __EGL_VENDOR_LIBRARY_DIRS="\$R/usr/share/glvnd/egl_vendor.d"
exec "\$R/$loader" --library-path "\$R/$libs:\$R/$libs/pulseaudio" "\$R/usr/bin/$2" "\$@"
EOF
  chmod +x "$1"
}
runs() { [ -x "$1" ] && "$1" --headless --version </dev/null 2>/dev/null | grep -q "^$2\."; }
# The frames of `verify --run` are drawn on a virtual display: the host's Xvfb.
display() {
  command -v Xvfb >/dev/null && return 0
  [ "$(id -u)" = 0 ] || { echo "install-godot: no Xvfb (apt-get install xvfb): runs go without frames" >&2; return 0; }
  apt-get update -q >/dev/null && apt-get install -y -q xvfb >/dev/null || echo "install-godot: xvfb did not install" >&2
}
if runs "$wrapper" 4 && runs "$wrapper3" 3 && runs "$runner3" 3 && grep -q LIBGL_DRIVERS_PATH "$wrapper"; then
  display
  echo "$wrapper"
  exit 0
fi
if [ "$(id -u)" = 0 ] && runs "$wrapper" 4 && [ -d "$root/usr" ]; then  # a root made before Godot 3 or Mesa was in it
  mount -t proc proc "$root/proc"
  trap 'umount "$root/proc" 2>/dev/null || true' EXIT
  DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get -q -o Acquire::Check-Valid-Until=false \
    install -y --no-install-recommends $packages >/dev/null
  umount "$root/proc"
  trap - EXIT
  write_wrapper "$wrapper" godot 4
  write_wrapper "$wrapper3" godot3-server 3
  write_wrapper "$runner3" godot3-runner 3
  runs "$wrapper3" 3 || { echo "install-godot: $wrapper3 does not run" >&2; exit 1; }
  runs "$runner3" 3 || { echo "install-godot: $runner3 does not run" >&2; exit 1; }
  display
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
  install -y --no-install-recommends $packages >/dev/null
umount "$building/proc"
rm -rf "$root"
mv "$building" "$root"
trap - EXIT
write_wrapper "$wrapper" godot 4
write_wrapper "$wrapper3" godot3-server 3
write_wrapper "$runner3" godot3-runner 3
runs "$wrapper" 4 || { echo "install-godot: $wrapper does not run" >&2; exit 1; }
runs "$wrapper3" 3 || { echo "install-godot: $wrapper3 does not run" >&2; exit 1; }
runs "$runner3" 3 || { echo "install-godot: $runner3 does not run" >&2; exit 1; }
display
echo "$wrapper"
