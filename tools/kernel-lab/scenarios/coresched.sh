# Core scheduling on one SMT core (seed 004's test, after
# policies/scenarios/004-coresched-idle-ipi.spec): CS_PER_CPU tagged tasks
# (one cookie) pinned to each CPU of CS_CPUS, each computing 110-170 us, waking
# its own untagged helper on its CPU (which computes CS_HELPER_US us) and
# sleeping 90-170 us; src/coresched.c. The tagged tasks' loops/s is the
# headline; the program marks each tagged task's cookie in the trace.
# params: CS_CPUS (0,1) CS_PER_CPU (2) CS_HELPER_US (25) CS_SECONDS (2)
workload() {
  for c in /sys/devices/system/cpu/cpu[0-9]*; do
    echo "${c##*/} thread_siblings=$(cat $c/topology/thread_siblings_list)"
  done
  marker "coresched_start cpus=${CS_CPUS:-0,1} per_cpu=${CS_PER_CPU:-2}"
  coresched -c ${CS_CPUS:-0,1} -n ${CS_PER_CPU:-2} -k ${CS_HELPER_US:-25} -d ${CS_SECONDS:-2}
  echo "coresched_rc=$?"
  marker coresched_end
}
describe() { echo "coresched -c ${CS_CPUS:-0,1} -n ${CS_PER_CPU:-2} -k ${CS_HELPER_US:-25} -d ${CS_SECONDS:-2}"; }
