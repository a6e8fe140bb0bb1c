# hackbench over pipes, processes (the workload of seed 000's e-mail:
# hackbench-process-pipes). The run time it prints is the headline metric.
# params: HB_GROUPS (2) HB_LOOPS (200)
workload() {
  marker "hackbench_start groups=${HB_GROUPS:-2} loops=${HB_LOOPS:-200} pipes processes"
  hackbench -p -g ${HB_GROUPS:-2} -l ${HB_LOOPS:-200}
  echo "hackbench_rc=$?"
  marker hackbench_end
}
describe() { echo "hackbench -p -g ${HB_GROUPS:-2} -l ${HB_LOOPS:-200}"; }
