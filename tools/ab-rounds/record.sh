#!/bin/bash
# Record an A/B corpus workload in interleaved rounds: each round records one
# run of the base side and one of every knob, the order rotated by one a
# round, so that a drift of the host (or of the emulator's speed) spreads
# over every side instead of landing between two blocks of runs. This is
# how fixtures/ab/hackbench-2cpu and fixtures/ab/pingpong-4cpu were recorded
# (fixtures/ab/README.md; docs/compare.md, "The order the runs were recorded
# in").
#
# usage: record.sh WORKLOAD OUTDIR [ROUNDS]
#   WORKLOAD  hackbench-2cpu | pingpong-4cpu (the corpus's TCG workloads)
#   OUTDIR    gets SIDE/run-R/ per capture (the files tools/qemu's
#             capture.sh writes), SIDE being base or a knob, and log.txt
#   ROUNDS    runs per side (default 4)
#
# Env:
#   QEMU_TOOL  the qemu capture scripts (capture.sh and its scenarios/)
#   QWORK      where those scripts' fetch-guest.sh unpacked the guest parts
#   KNOBS      the sides besides base (default: NO_RUN_TO_PARITY NO_PLACE_LAG
#              NO_WAKEUP_PREEMPTION NO_DELAY_DEQUEUE base_slice_3ms); a
#              NO_/feature name goes to SCHED_FEATURES, base_slice_3ms to
#              SCHED_DEBUGFS base_slice_ns=3000000
#
# Then, for fixtures/ab/WORKLOAD: OUTDIR/base/run-R -> base-R and
# OUTDIR/KNOB/run-R -> KNOB/new-R. Record on a quiet host.
set -euo pipefail
wl=${1:?usage: record.sh WORKLOAD OUTDIR [ROUNDS]}
out=${2:?usage: record.sh WORKLOAD OUTDIR [ROUNDS]}
rounds=${3:-4}
: "${QEMU_TOOL:?set QEMU_TOOL to the directory of the qemu capture scripts}"
: "${QWORK:?set QWORK to where fetch-guest.sh unpacked the guest parts}"
export QWORK
case $wl in
hackbench-2cpu | pingpong-4cpu) ;;
*) echo "record.sh: workload $wl: want hackbench-2cpu or pingpong-4cpu" >&2; exit 2 ;;
esac
read -r -a knobs <<< "${KNOBS:-NO_RUN_TO_PARITY NO_PLACE_LAG NO_WAKEUP_PREEMPTION NO_DELAY_DEQUEUE base_slice_3ms}"
sides=(base "${knobs[@]}")
mkdir -p "$out"

capture() { # SIDE ROUND
	local side=$1 r=$2 dir=$out/$1/run-$2 feat="" dbg=""
	case $side in
	base) ;;
	base_slice_3ms) dbg="base_slice_ns=3000000" ;;
	*) feat=$side ;;
	esac
	mkdir -p "$dir"
	echo "$(date -u +%FT%TZ) $wl $side round $r load $(cut -d' ' -f1 /proc/loadavg)" >> "$out/log.txt"
	case $wl in
	hackbench-2cpu)
		SCHED_FEATURES="$feat" SCHED_DEBUGFS="$dbg" SMP=2 PARAMS="HB_GROUPS HB_LOOPS CT_SECONDS" \
			HB_GROUPS=2 HB_LOOPS=100 CT_SECONDS=2 \
			"$QEMU_TOOL/capture.sh" amd64 hackbench "$dir" > "$dir.log" 2>&1 ;;
	pingpong-4cpu)
		SCHED_FEATURES="$feat" SCHED_DEBUGFS="$dbg" SMP=4,sockets=1,cores=2,threads=2 \
			PARAMS="PP_A PP_B HOG_CPUS HOG_PER_CPU PP_SECONDS" PP_A=0 PP_B=2 HOG_CPUS=1,3 HOG_PER_CPU=2 PP_SECONDS=2 \
			"$QEMU_TOOL/capture.sh" amd64 pingpong "$dir" > "$dir.log" 2>&1 ;;
	esac
}

n=${#sides[@]}
for ((r = 1; r <= rounds; r++)); do
	for ((i = 0; i < n; i++)); do
		capture "${sides[$(((i + r - 1) % n))]}" "$r"
	done
done
echo "$(date -u +%FT%TZ) done" >> "$out/log.txt"
