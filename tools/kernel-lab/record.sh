#!/bin/bash
# Record a seed patch's own test on the kernel without the patch ("before") and
# with it ("after"), alternating the two, RUNS times each.
#
# usage: record.sh SEED OUTDIR [RUNS]
#   SEED    000 | 001 | 002 | 003 | 004 (see the table below)
#   OUTDIR  gets SIDE/run-N/ per capture (the files tools/qemu's capture.sh writes)
#   RUNS    captures per side (default 3)
#
# Env:
#   QEMU_TOOL  the qemu capture scripts (capture.sh, mkinitramfs.sh, scenarios/);
#              this script copies them and adds its own scenarios/
#   QWORK      where those scripts' fetch-guest.sh unpacked the guest parts
#   KLAB       build.sh's work directory
#
# Seed       arch   guest                  workload                         before / after
# 000        amd64  4 vCPUs (2 cores x 2)  hackbench -p -g 2 -l 200         6.12 / 6.12 + 000
# 001        arm64  Juno-like, 6 CPUs      asym (6 tasks, step 1 pinned)    6.12 - 001 / 6.12
# 002        amd64  4 vCPUs                hackbench + cyclictest at nice   6.12 / 6.12 + 002,
#                                          -19, 0, 19                       each with RUN_TO_PARITY
#                                                                           on and off
# 003        amd64  8 vCPUs (4 cores x 2)  pingpong on CPUs 0 and 2, 4     6.12 - 003 / 6.12
#                                          pinned hogs on each other CPU
# 004        amd64  4 vCPUs (2 cores x 2)  coresched: 2 tagged tasks and    6.12 - forced-idle sync /
#                                          their helpers on each of CPUs    the same + 004; and
#                                          0 and 1 (one core)               6.12 ("mainline")
#
# The workload programs of src/*.c are built static for ARCH and given to the
# guest through a QWORK overlay (QWORK's entries linked, bin-ARCH holding
# QWORK's programs and these), with the copied mkinitramfs.sh told to take
# every program of bin-ARCH.
#
# Record on a quiet host: every other process on it stretches the guest's timing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
seed=${1:?usage: record.sh SEED OUTDIR [RUNS]}
outdir=${2:?usage: record.sh SEED OUTDIR [RUNS]}
runs=${3:-3}
: "${QEMU_TOOL:?set QEMU_TOOL to the directory of the qemu capture scripts}"

tool=$(mktemp -d)
trap 'rm -rf "$tool"' EXIT
cp -r "$QEMU_TOOL"/. "$tool/"
cp "$here"/scenarios/*.sh "$tool/scenarios/"

# sides: NAME=PATCHES[:SCHED_FEATURES]
case $seed in
000) arch=amd64 scen=hackbench-pipes
     export SMP=4,sockets=1,cores=2,threads=2 PARAMS="HB_GROUPS HB_LOOPS" HB_GROUPS=${HB_GROUPS:-2} HB_LOOPS=${HB_LOOPS:-200}
     sides=(before=base after=000-apply) ;;
001) arch=arm64 scen=asym
     export PARAMS="ASYM_CHUNKS ASYM_STEP1" ASYM_CHUNKS=${ASYM_CHUNKS:-7000} ASYM_STEP1=${ASYM_STEP1:-1.0}
     sides=(before=001-revert after=base) ;;
002) arch=amd64 scen=hackbench-cyclictest-nice
     export SMP=4,sockets=1,cores=4,threads=1 PARAMS="HB_GROUPS CT_SECONDS" HB_GROUPS=${HB_GROUPS:-4} CT_SECONDS=${CT_SECONDS:-4}
     sides=(before-nortp=base:NO_RUN_TO_PARITY after-nortp=002-apply:NO_RUN_TO_PARITY before-rtp=base after-rtp=002-apply) ;;
003) arch=amd64 scen=pingpong
     export SMP=8,sockets=1,cores=4,threads=2 PARAMS="PP_A PP_B HOG_CPUS HOG_PER_CPU PP_SECONDS" PP_A=0 PP_B=2 HOG_CPUS=1,3,4,5,6,7 HOG_PER_CPU=${HOG_PER_CPU:-4} PP_SECONDS=${PP_SECONDS:-4}
     sides=(before=003-revert after=base) ;;
004) arch=amd64 scen=coresched
     export SMP=4,sockets=1,cores=2,threads=2 PARAMS="CS_CPUS CS_PER_CPU CS_HELPER_US CS_SECONDS" CS_CPUS=${CS_CPUS:-0,1} CS_PER_CPU=${CS_PER_CPU:-2} CS_HELPER_US=${CS_HELPER_US:-25} CS_SECONDS=${CS_SECONDS:-1.5}
     # schedstats on: each task's core_forceidle_sum (/proc/PID/sched) shows the forced idle
     export SCHED_SYSCTLS=kernel.sched_schedstats=1
     sides=(before=004-nosync after=004-nosync,004-apply mainline=base) ;;
*) echo "record.sh: no seed $seed (000 001 002 003 004)" >&2; exit 2 ;;
esac

# The guest programs: QWORK's and src/*.c built static for ARCH.
: "${QWORK:?set QWORK to the guest parts fetch-guest.sh unpacked}"
case $arch in amd64) cc=gcc ;; arm64) cc=aarch64-linux-gnu-gcc ;; esac
qwork=$tool/qwork
mkdir -p "$qwork/bin-$arch"
for e in "$QWORK"/*; do [ "$(basename "$e")" = "bin-$arch" ] || ln -s "$e" "$qwork/"; done
cp "$QWORK/bin-$arch"/* "$qwork/bin-$arch/"
for c in "$here"/src/*.c; do
  "$cc" -O2 -Wall -static -pthread -o "$qwork/bin-$arch/$(basename "$c" .c)" "$c"
done
sed -i 's|cp "$QWORK/bin-$arch"/{pingpong,hog,asym} |cp "$QWORK/bin-$arch"/* |' "$tool/mkinitramfs.sh"
grep -q 'bin-$arch"/\* ' "$tool/mkinitramfs.sh" || { echo "record.sh: cannot make mkinitramfs.sh take every program of bin-$arch" >&2; exit 1; }
export QWORK=$qwork

# The seed patch each patch set is, as schedlens names it: written to meta.txt
# (sched_patches:) so that whatif's baseline models the kernel recorded; and
# the model features a set changes that are no sched_feat of the kernel
# (sched_model_features:): 004-nosync is the model's NO_CORE_SYNC.
declare -A model=([base]= [000-apply]=+lb-eligible-first [001-revert]=-lb-util-shr-bound
                  [002-apply]=+resched-ineligible [003-revert]=-newidle-bailout
                  [004-nosync]= [004-nosync,004-apply]=+coresched-idle-ipi)
declare -A modelfeat=([004-nosync]=NO_CORE_SYNC [004-nosync,004-apply]=NO_CORE_SYNC)
declare -A kernel
for s in "${sides[@]}"; do
  name=${s%%=*} rest=${s#*=} patches=${rest%%:*}
  [ -n "${kernel[$patches]:-}" ] && continue
  kernel[$patches]=$("$here/build.sh" "$arch" "$patches" | tail -1)
done

mkdir -p "$outdir"
for r in $(seq 1 "$runs"); do
  for s in "${sides[@]}"; do
    name=${s%%=*} rest=${s#*=} patches=${rest%%:*} feats=
    [[ $rest == *:* ]] && feats=${rest#*:}
    d=$outdir/$name/run-$r
    [ -f "$d/trace.txt.zst" ] && continue
    mkdir -p "$d"
    KERNEL=${kernel[$patches]} SCHED_FEATURES=$feats "$tool/capture.sh" "$arch" "$scen" "$d" > "$d.log" 2>&1 || { echo "$name run-$r failed: $d.log"; continue; }
    { echo "seed: $seed"; echo "side: $name"; echo "kernel_patches: $patches"; echo "sched_patches: ${model[$patches]}"
      echo "sched_model_features: ${modelfeat[$patches]:-}"
      echo "kernel_image: $(basename "${kernel[$patches]}") (tools/kernel-lab/build.sh $arch $patches)"; } >> "$d/meta.txt"
    echo "$(date +%T) $seed $name run-$r $(du -h "$d/trace.txt.zst" | cut -f1)"
  done
done
