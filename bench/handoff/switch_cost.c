/* What a per-thread perf event costs at every context switch, on this host: two threads hand a
 * token back and forth through semaphores on one CPU, without and with a counting task-clock event
 * (mmapped, as tsc-hybrid opens it) on one of them. Prints the process CPU time per round of each:
 *   switch_cost bare NS event NS
 * Usage: switch_cost ROUNDS */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static sem_t ping, pong;
static long rounds;

static long long process_cpu_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int open_task_clock(void) {
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  int fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd >= 0 && mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED) return -1;
  return fd;
}

static void *partner(void *unused) {
  (void)unused;
  for (long i = 0; i < rounds; i++) {
    sem_wait(&pong);
    sem_post(&ping);
  }
  return NULL;
}

static double per_round(void) {
  pthread_t t;
  pthread_create(&t, NULL, partner, NULL);
  long long before = process_cpu_ns();
  for (long i = 0; i < rounds; i++) {
    sem_post(&pong);
    sem_wait(&ping);
  }
  long long after = process_cpu_ns();
  pthread_join(t, NULL);
  return (double)(after - before) / rounds;
}

int main(int argc, char **argv) {
  rounds = argc > 1 ? atol(argv[1]) : 200000;
  sem_init(&ping, 0, 0);
  sem_init(&pong, 0, 0);
  double bare = per_round();
  if (open_task_clock() < 0) {
    printf("switch_cost bare %.0f event -\n", bare);
    return 0;
  }
  printf("switch_cost bare %.0f event %.0f\n", bare, per_round());
  return 0;
}
