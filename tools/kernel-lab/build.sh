#!/bin/bash
# Build a guest kernel from Debian's linux-source-6.12 with a set of seed patches
# applied (or reverted), for the qemu guests of tools/qemu (../shared/tools/qemu).
#
# usage: build.sh ARCH PATCHES
#   ARCH     amd64 | arm64 (arm64 is cross-compiled with aarch64-linux-gnu-gcc)
#   PATCHES  "base" (the source as Debian ships it) or a comma-separated list of
#            patch names from patches/ without ".patch", e.g. "003-revert"
# Prints the path of the kernel image (bzImage / Image) on its last line.
#
# Env:
#   KLAB  work directory (default ~/.cache/schedlens-kernel-lab): the unpacked
#         source, one build tree per ARCH, and the image cache
#   SRC   the source tarball (default /usr/src/linux-source-6.12.tar.xz, from the
#         Debian package linux-source-6.12)
#   JOBS  make -j (default: nproc + 1)
#
# Images are cached under $KLAB/images by a key over the source tarball's name,
# the config fragment and the patch texts: asking again for a built set is free.
# One build tree per ARCH is reused, so after the first build (about 15 minutes
# on 2 cores for amd64) a patch set costs only the files it touches.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
arch=${1:?usage: build.sh ARCH PATCHES}
set=${2:?usage: build.sh ARCH PATCHES}
KLAB=${KLAB:-$HOME/.cache/schedlens-kernel-lab}
SRC=${SRC:-/usr/src/linux-source-6.12.tar.xz}
JOBS=${JOBS:-$(( $(nproc) + 1 ))}
case $arch in
amd64) karch=x86_64 cross= image=arch/x86/boot/bzImage target=bzImage ;;
arm64) karch=arm64 cross=aarch64-linux-gnu- image=arch/arm64/boot/Image target=Image ;;
*) echo "build.sh: ARCH must be amd64 or arm64, not $arch" >&2; exit 2 ;;
esac

patches=()
if [ "$set" != base ]; then
  IFS=, read -ra names <<< "$set"
  for n in "${names[@]}"; do
    p=$here/patches/$n.patch
    [ -f "$p" ] || { echo "build.sh: no patch $p" >&2; exit 2; }
    patches+=("$p")
  done
fi

key=$( { basename "$SRC"; cat "$here/guest.config"; for p in "${patches[@]}"; do cat "$p"; done; } | sha256sum | cut -c1-12)
out_img=$KLAB/images/$arch-$set-$key.img
if [ -f "$out_img" ]; then echo "cached: $out_img"; echo "$out_img"; exit 0; fi

mkdir -p "$KLAB/images"
src=$KLAB/src
if [ ! -f "$src/.unpacked" ]; then
  [ -f "$SRC" ] || { echo "build.sh: no $SRC (apt-get install linux-source-6.12)" >&2; exit 2; }
  rm -rf "$src"; mkdir -p "$src"
  tar -xf "$SRC" -C "$src" --strip-components=1
  mkdir -p "$src/.pristine"
  cp "$src/kernel/sched/fair.c" "$src/kernel/sched/core.c" "$src/.pristine/"
  touch "$src/.unpacked"
fi
# Back to the source as shipped, then this set's patches.
cp "$src/.pristine/fair.c" "$src/.pristine/core.c" "$src/kernel/sched/"
for p in "${patches[@]}"; do
  echo "applying $(basename "$p")"
  patch -d "$src" -p1 --no-backup-if-mismatch < "$p"
done

obj=$KLAB/build-$arch
mkdir -p "$obj"
mk=(make -C "$src" O="$obj" ARCH="$karch" ${cross:+CROSS_COMPILE=$cross})
if ! cmp -s "$here/guest.config" "$obj/.fragment" 2>/dev/null; then
  "${mk[@]}" tinyconfig > /dev/null
  (cd "$src" && ARCH=$karch ./scripts/kconfig/merge_config.sh -m -O "$obj" "$obj/.config" "$here/guest.config") > "$obj/merge.log"
  "${mk[@]}" olddefconfig > /dev/null
  cp "$here/guest.config" "$obj/.fragment"
fi
start=$(date +%s)
"${mk[@]}" -j"$JOBS" "$target" > "$obj/build.log" 2>&1 || { tail -30 "$obj/build.log"; exit 1; }
cp "$obj/$image" "$out_img"
{
  echo "source: $(basename "$SRC")"
  echo "patches: ${set}"
  echo "built: $(date -u +%FT%TZ) in $(( $(date +%s) - start )) s, $("${cross}gcc" --version | head -1)"
} > "$out_img.txt"
echo "built in $(( $(date +%s) - start )) s"
echo "$out_img"
