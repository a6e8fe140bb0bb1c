#!/usr/bin/env bash
# overhead.sh: how much `schedlens record` slows a scheduler-heavy workload.
#
# Runs hackbench RUNS times bare and RUNS times under `schedlens record`,
# alternating the two so that drift in machine load hits both alike, and
# prints for every run hackbench's own time, the recording rate, and the
# CPU the recording cost: the recorder's own (reading, decoding, writing)
# plus the time spent in the BPF programs (kernel.bpf_stats_enabled is
# switched on for the run and restored after). It ends with two figures:
#
#   wall overhead: median recorded time / median bare time - 1
#   CPU overhead:  median of (recorder CPU + BPF time) / hackbench CPU
#
# The first is what a user sees but is as noisy as the machine; the second
# does not depend on what else runs.
#
#   sudo record/bench/overhead.sh                 # 7 runs of hackbench -g 4 -l 500
#   RUNS=11 sudo record/bench/overhead.sh -- -g 8 -l 1000
#   TRANSPORT=perf sudo record/bench/overhead.sh
#
# Env: RUNS (default 7), TRANSPORT (auto|ringbuf|perf), RECORD_FLAGS (more
# flags for schedlens record, e.g. --no-task-attrs), SCHEDLENS (a built
# binary; by default the script builds one from this checkout). Needs root,
# hackbench (Debian: rt-tests), GNU time (/usr/bin/time) and Go when it
# builds.
set -euo pipefail

runs=${RUNS:-7}
args=(-g 4 -l 500)
if [ "${1:-}" = "--" ]; then
  shift
  args=("$@")
fi
command -v hackbench >/dev/null || { echo "hackbench not found (Debian: apt-get install rt-tests)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time not found (Debian: apt-get install time)" >&2; exit 1; }

tmp=$(mktemp -d)
stats=/proc/sys/kernel/bpf_stats_enabled
old_stats=$(cat "$stats" 2>/dev/null || echo 0)
trap 'echo "$old_stats" > "$stats" 2>/dev/null || true; rm -rf "$tmp"' EXIT
echo 1 > "$stats" 2>/dev/null || echo "warning: cannot enable $stats: BPF time not counted" >&2

bin=${SCHEDLENS:-}
if [ -z "$bin" ]; then
  root=$(cd "$(dirname "$0")/../.." && pwd)
  (cd "$root" && go build -o "$tmp/schedlens" ./cmd/schedlens)
  bin=$tmp/schedlens
fi

# hb runs hackbench under GNU time; prints "WALL CPU" (hackbench's own Time:
# figure and its user+system seconds).
hb() {
  "$@" /usr/bin/time -f 'cpu %U %S' -o "$tmp/time" hackbench "${args[@]}" > "$tmp/hb.out"
  awk '/^Time:/ { w = $2 } END { printf "%s ", w }' "$tmp/hb.out"
  awk '/^cpu/ { printf "%.2f\n", $2 + $3 }' "$tmp/time"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "workload: hackbench ${args[*]}; $runs runs each, alternating; transport ${TRANSPORT:-auto}"
printf '%4s %8s %8s %8s %8s %10s %6s %7s %7s %7s\n' run bare_s hb_cpu rec_s hb_cpu events/s lost rec_cpu bpf_s cpu_ovh
: > "$tmp/bare"; : > "$tmp/rec"; : > "$tmp/ovh"
for i in $(seq "$runs"); do
  read -r bw bc < <(hb)
  # shellcheck disable=SC2086 # RECORD_FLAGS is a list of flags
  read -r rw rc < <(hb "$bin" record --transport "${TRANSPORT:-auto}" ${RECORD_FLAGS:-} -o "$tmp/run.pftrace" -- 2>"$tmp/summary")
  sum=$(cat "$tmp/summary")
  rate=$(sed -n 's/.*(\([0-9]*\) events\/s.*/\1/p' <<< "$sum")
  lost=$(sed -n 's/.* \([0-9]*\) lost;.*/\1/p' <<< "$sum")
  rcpu=$(sed -n 's/.*, \([0-9.]*\) s CPU.*/\1/p' <<< "$sum")
  bpf=$(sed -n 's/.* + \([0-9.]*\) s in BPF.*/\1/p' <<< "$sum")
  ovh=$(awk -v r="$rcpu" -v b="${bpf:-0}" -v h="$rc" 'BEGIN { printf "%.1f", (h > 0) ? 100 * (r + b) / h : 0 }')
  echo "$bw" >> "$tmp/bare"; echo "$rw" >> "$tmp/rec"; echo "$ovh" >> "$tmp/ovh"
  printf '%4d %8s %8s %8s %8s %10s %6s %7s %7s %6s%%\n' "$i" "$bw" "$bc" "$rw" "$rc" "$rate" "$lost" "$rcpu" "${bpf:--}" "$ovh"
done
mb=$(median < "$tmp/bare")
mr=$(median < "$tmp/rec")
mo=$(median < "$tmp/ovh")
awk -v b="$mb" -v r="$mr" -v o="$mo" 'BEGIN {
  printf "median: bare %.3f s, recording %.3f s: wall overhead %+.1f%%; CPU overhead %.1f%%\n", b, r, 100 * (r - b) / b, o }'
