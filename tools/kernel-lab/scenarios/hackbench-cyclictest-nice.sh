# hackbench keeping every CPU busy while three cyclictest threads (SCHED_OTHER)
# measure wakeup latency at nice -19, 0 and 19 (seed 002's test: the e-mail ran
# one cyclictest per nice level beside "hackbench -g 4 -l 100000000" on four
# isolated cores; here the three run at once, one process each, to fit one boot).
# params: HB_GROUPS (4) CT_SECONDS (4) CT_INTERVAL_US (1000)
workload() {
  marker "hackbench_start groups=${HB_GROUPS:-4} (until the cyclictests end)"
  hackbench -g ${HB_GROUPS:-4} -l 100000000 > /tmp/hackbench.out 2>&1 &
  hb=$!
  sleep 0.5
  marker "cyclictest_start"
  for n in -19 0 19; do
    # busybox has renice but no nice: the shell renices itself, then becomes
    # cyclictest, whose measuring thread inherits the nice level.
    sh -c "renice -n $n -p \$\$ > /dev/null; exec cyclictest -m -D ${CT_SECONDS:-4} -q -i ${CT_INTERVAL_US:-1000} -t 1" > /tmp/ct$n.out 2>&1 &
    eval ct$(( n + 19 ))=$!
  done
  wait $ct0 $ct19 $ct38
  marker "cyclictest_end"
  killall hackbench 2>/dev/null; wait $hb 2>/dev/null
  for n in -19 0 19; do echo "nice $n:"; cat /tmp/ct$n.out; done
}
describe() { echo "hackbench -g ${HB_GROUPS:-4} -l 100000000 & for n in -19 0 19; do nice -n \$n cyclictest -m -D ${CT_SECONDS:-4} -q -i ${CT_INTERVAL_US:-1000} -t 1 & done; wait; kill hackbench"; }
