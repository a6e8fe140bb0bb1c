// coresched: seed 004's test (core scheduling, an idle SMT sibling with
// runnable tasks). Tagged tasks share one core-scheduling cookie; each one
// loops: compute for its run time, wake its own untagged helper pinned to the
// same CPU (the e-mail's kworker: a pipe write), sleep for its sleep time (the
// e-mail's wait for the disk interrupt: an hrtimer). A helper computes for
// -k us per wake. The run and sleep times cycle through the lists given
// (policies/scenarios/004-coresched-idle-ipi.spec's db0a, db0b, db1a, db1b).
//
// usage: coresched [-c CPUS] [-n PER_CPU] [-r RUN_US,...] [-s SLEEP_US,...]
//                  [-k HELPER_US] [-d SECONDS]
//   -c  CPUs for the tagged tasks, comma-separated (default 0,1: one core)
//   -n  tagged tasks per CPU (default 2)
//   -r  run times in us, cycled over the tagged tasks (150,110,130,170)
//   -s  sleep times in us, cycled likewise (120,170,140,90)
//   -k  helper run time per wake in us (25)
//   -d  seconds to run (2)
//
// The tagged tasks are the threads of one child process whose cookie comes
// from prctl(PR_SCHED_CORE, PR_SCHED_CORE_CREATE, 0, THREAD_GROUP); the
// helpers are threads of the parent and have none. Each tagged thread writes
// "core_sched_cookie tid=T cookie=0xC" to the trace marker, so that a trace
// says which tasks were tagged. C names the cookie: the PID of the process
// that created it. (PR_SCHED_CORE_GET's answer is a hash of the cookie's
// address, and 0 until the kernel's pointer-hash key is ready
// (ptr_to_hashval, lib/vsprintf.c), which in a fresh guest without an
// entropy source it is not; it is printed as get_cookie.) Each task's
// core_forceidle_sum from /proc/thread-self/sched (the time it ran while an
// SMT sibling was forced idle; schedstats) is printed as forceidle_ms.
// The tagged threads are named cs-tagN and the helpers cs-helpN, N their CPU.
// The whole run's elapsed time (fork to the last helper's exit) is printed
// too: a stall of the tagged process's main thread as it reaps its threads
// shows there and not in loops/s.
// Prints per tagged task its loops and loops/s and /proc/thread-self/schedstat
// (run and wait ns), per helper its wakes and schedstat, and the total.
// Exit status 3 when core scheduling is unavailable (prctl fails).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// include/uapi/linux/prctl.h
#ifndef PR_SCHED_CORE
#define PR_SCHED_CORE 62
#endif
#define CORE_GET 0
#define CORE_CREATE 1
#define SCOPE_THREAD 0
#define SCOPE_THREAD_GROUP 1

#define MAXT 64

struct slot {
  int cpu, run_us, sleep_us, tid, htid;
  int pipe[2];
  long loops, wakes;
  unsigned long long cookie, get_cookie;
  int get_rc;
  char fi_ms[32], hfi_ms[32];
  long long run_ns, wait_ns;
  long long hrun_ns, hwait_ns;
};

static struct slot *slots;  // shared between the two processes
static int nslot, helper_us = 25;
static double seconds = 2;
static int marker_fd = -1;
static pthread_barrier_t start_bar;

static long long now_ns(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// spin burns us of this thread's CPU time (time it waited does not count).
static void spin(int us) {
  long long end = now_ns(CLOCK_THREAD_CPUTIME_ID) + us * 1000LL;
  while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end)
    ;
}

static void pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  if (sched_setaffinity(0, sizeof s, &s) != 0) {
    fprintf(stderr, "sched_setaffinity cpu %d: %s\n", cpu, strerror(errno));
    exit(1);
  }
}

static void schedstat(long long *run, long long *wait) {
  FILE *f = fopen("/proc/thread-self/schedstat", "r");
  *run = *wait = -1;
  if (f) {
    if (fscanf(f, "%lld %lld", run, wait) != 2) *run = *wait = -1;
    fclose(f);
  }
}

// forceidle copies core_forceidle_sum (ms) from /proc/thread-self/sched.
static void forceidle(char *out, size_t n) {
  char line[256];
  FILE *f = fopen("/proc/thread-self/sched", "r");
  snprintf(out, n, "-");
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    char *c = strchr(line, ':');
    if (strncmp(line, "core_forceidle_sum", 18) == 0 && c) {
      snprintf(out, n, "%s", c + 1 + strspn(c + 1, " "));
      out[strcspn(out, "\n")] = 0;
    }
  }
  fclose(f);
}

static void marker(const char *s) {
  if (marker_fd >= 0 && write(marker_fd, s, strlen(s)) < 0) {
  }
}

static void *helper(void *arg) {
  struct slot *sl = arg;
  char c;
  pin(sl->cpu);
  sl->htid = syscall(SYS_gettid);
  char name[16];
  snprintf(name, sizeof name, "cs-help%d", sl->cpu);
  prctl(PR_SET_NAME, name);
  while (read(sl->pipe[0], &c, 1) == 1) {
    spin(helper_us);
    sl->wakes++;
  }
  schedstat(&sl->hrun_ns, &sl->hwait_ns);
  forceidle(sl->hfi_ms, sizeof sl->hfi_ms);
  return NULL;
}

static void *tagged(void *arg) {
  struct slot *sl = arg;
  char buf[128];
  pin(sl->cpu);
  sl->tid = syscall(SYS_gettid);
  snprintf(buf, sizeof buf, "cs-tag%d", sl->cpu);
  prctl(PR_SET_NAME, buf);
  sl->get_rc = prctl(PR_SCHED_CORE, CORE_GET, sl->tid, SCOPE_THREAD, &sl->get_cookie) == 0 ? 0 : errno;
  sl->cookie = getpid();
  snprintf(buf, sizeof buf, "core_sched_cookie tid=%d cookie=0x%llx", sl->tid, sl->cookie);
  marker(buf);
  struct timespec nap = {0, sl->sleep_us * 1000L};
  pthread_barrier_wait(&start_bar);
  long long end = now_ns(CLOCK_MONOTONIC) + (long long)(seconds * 1e9);
  while (now_ns(CLOCK_MONOTONIC) < end) {
    spin(sl->run_us);
    if (write(sl->pipe[1], "x", 1) != 1) break;
    nanosleep(&nap, NULL);
    sl->loops++;
  }
  schedstat(&sl->run_ns, &sl->wait_ns);
  forceidle(sl->fi_ms, sizeof sl->fi_ms);
  return NULL;
}

static int parse_list(const char *s, int *out, int max) {
  int n = 0;
  char *dup = strdup(s), *save, *tok;
  for (tok = strtok_r(dup, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save))
    out[n++] = atoi(tok);
  free(dup);
  return n;
}

int main(int argc, char **argv) {
  int cpus[MAXT], runs[MAXT] = {150, 110, 130, 170}, sleeps[MAXT] = {120, 170, 140, 90};
  int ncpu = 2, nrun = 4, nsleep = 4, per = 2, o;
  cpus[0] = 0, cpus[1] = 1;
  while ((o = getopt(argc, argv, "c:n:r:s:k:d:")) != -1) {
    switch (o) {
    case 'c': ncpu = parse_list(optarg, cpus, MAXT); break;
    case 'n': per = atoi(optarg); break;
    case 'r': nrun = parse_list(optarg, runs, MAXT); break;
    case 's': nsleep = parse_list(optarg, sleeps, MAXT); break;
    case 'k': helper_us = atoi(optarg); break;
    case 'd': seconds = atof(optarg); break;
    default:
      fprintf(stderr, "usage: coresched [-c CPUS] [-n PER_CPU] [-r RUN_US,...] [-s SLEEP_US,...] [-k HELPER_US] [-d SECONDS]\n");
      return 2;
    }
  }
  nslot = ncpu * per;
  if (nslot < 1 || nslot > MAXT || nrun < 1 || nsleep < 1) {
    fprintf(stderr, "coresched: 1..%d tagged tasks, and run/sleep lists, wanted\n", MAXT);
    return 2;
  }
  slots = mmap(NULL, sizeof(struct slot) * nslot, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (slots == MAP_FAILED) { perror("mmap"); return 1; }
  memset(slots, 0, sizeof(struct slot) * nslot);
  for (int i = 0; i < nslot; i++) {
    slots[i].cpu = cpus[i / per];
    slots[i].run_us = runs[i % nrun];
    slots[i].sleep_us = sleeps[i % nsleep];
    if (pipe(slots[i].pipe) != 0) { perror("pipe"); return 1; }
  }
  marker_fd = open("/sys/kernel/tracing/trace_marker", O_WRONLY);
  pthread_t ht[MAXT], tt[MAXT];
  for (int i = 0; i < nslot; i++) pthread_create(&ht[i], NULL, helper, &slots[i]);

  long long t0 = now_ns(CLOCK_MONOTONIC);
  pid_t child = fork();
  if (child == 0) {
    for (int i = 0; i < nslot; i++) close(slots[i].pipe[0]);
    if (prctl(PR_SCHED_CORE, CORE_CREATE, 0, SCOPE_THREAD_GROUP, 0) != 0) {
      printf("core_sched: prctl(PR_SCHED_CORE, CREATE) failed: %s\n", strerror(errno));
      fflush(stdout);
      _exit(3);
    }
    char buf[128];  // the main thread shares the cookie: mark it too
    snprintf(buf, sizeof buf, "core_sched_cookie tid=%d cookie=0x%x", getpid(), getpid());
    marker(buf);
    pthread_barrier_init(&start_bar, NULL, nslot);
    for (int i = 0; i < nslot; i++) pthread_create(&tt[i], NULL, tagged, &slots[i]);
    for (int i = 0; i < nslot; i++) pthread_join(tt[i], NULL);
    _exit(0);
  }
  for (int i = 0; i < nslot; i++) close(slots[i].pipe[1]);  // helpers see EOF when the child exits
  int st = 0;
  waitpid(child, &st, 0);
  for (int i = 0; i < nslot; i++) pthread_join(ht[i], NULL);
  double elapsed = (now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    printf("core_sched: tagged process ended with status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
  }
  long total = 0;
  printf("coresched: %d tagged tasks on CPUs", nslot);
  for (int i = 0; i < ncpu; i++) printf("%s%d", i ? "," : " ", cpus[i]);
  printf(", %d per CPU, helper %d us per wake, %.2f s\n", per, helper_us, seconds);
  for (int i = 0; i < nslot; i++) {
    struct slot *sl = &slots[i];
    total += sl->loops;
    printf("tagged %d tid=%d cpu=%d cookie=0x%llx get_cookie=0x%llx get_errno=%d run_us=%d sleep_us=%d loops=%ld loops_per_s=%.1f schedstat_run_ns=%lld schedstat_wait_ns=%lld forceidle_ms=%s\n",
           i, sl->tid, sl->cpu, sl->cookie, sl->get_cookie, sl->get_rc, sl->run_us, sl->sleep_us, sl->loops, sl->loops / seconds, sl->run_ns, sl->wait_ns, sl->fi_ms);
  }
  for (int i = 0; i < nslot; i++) {
    struct slot *sl = &slots[i];
    printf("helper %d tid=%d cpu=%d wakes=%ld schedstat_run_ns=%lld schedstat_wait_ns=%lld forceidle_ms=%s\n",
           i, sl->htid, sl->cpu, sl->wakes, sl->hrun_ns, sl->hwait_ns, sl->hfi_ms);
  }
  printf("total loops=%ld loops_per_s=%.1f\n", total, total / seconds);
  printf("elapsed: %.3f s (fork of the tagged process to the last helper's exit; %.2f s of loops)\n", elapsed, seconds);
  return 0;
}
