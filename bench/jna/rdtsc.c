/* The cost of one bare rdtsc on this host, in this run, for scripts/bench-jna: CPU ns per read over n
 * back-to-back reads. Called through JNA direct mapping (JnaBench.Rdtsc). */
#include <time.h>
#include <x86intrin.h>

static double thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

double rdtsc_ns(int n) {
    unsigned long long fold = 0;
    double start = thread_cpu_ns();
    for (int i = 0; i < n; i++) {
        fold += __rdtsc();
    }
    double elapsed = thread_cpu_ns() - start;
    /* Keep the loop: the compiler must assume the sum is used. */
    __asm__ volatile("" : : "r"(fold));
    return elapsed / n;
}
