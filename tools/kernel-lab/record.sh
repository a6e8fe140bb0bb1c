#!/bin/bash
# Record a seed patch's own test on the kernel without the patch ("before") and
# with it ("after"), alternating the two, RUNS times each.
#
# usage: record.sh SEED OUTDIR [RUNS]
#   SEED    000 | 001 | 002 | 003 (see the table below)
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
*) echo "record.sh: no seed $seed (000 001 002 003)" >&2; exit 2 ;;
esac

# The seed patch each patch file is, as schedlens names it: written to meta.txt
# (sched_patches:) so that whatif's baseline models the kernel recorded.
declare -A model=([base]= [000-apply]=+lb-eligible-first [001-revert]=-lb-util-shr-bound
                  [002-apply]=+resched-ineligible [003-revert]=-newidle-bailout)
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
      echo "kernel_image: $(basename "${kernel[$patches]}") (tools/kernel-lab/build.sh $arch $patches)"; } >> "$d/meta.txt"
    echo "$(date +%T) $seed $name run-$r $(du -h "$d/trace.txt.zst" | cut -f1)"
  done
done
