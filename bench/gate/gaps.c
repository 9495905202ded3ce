/* How often does a short interval of counter time hide a switch-out? A thread spins reading the
 * counter back to back; every jump of more than 1 us between two reads is a gap (an interrupt, a
 * context switch or hypervisor steal). Each gap is followed by an exact CLOCK_THREAD_CPUTIME_ID read,
 * so the time the thread was off the CPU during the gap is known exactly: counter time since the last
 * exact read minus CPU time since then. Prints, per gap length, how many gaps there were and how much
 * off-CPU time they held: what a gate of that length would count as running.
 *   gaps SECONDS */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

static uint64_t ns_of(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const double edges_us[] = {1, 2, 5, 10, 20, 30, 50, 100, 200, 1000, 1e12};
#define BUCKETS (sizeof edges_us / sizeof edges_us[0] - 1)

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 5;
    uint64_t wall0 = ns_of(CLOCK_MONOTONIC_RAW), tsc0 = __rdtsc();
    while (ns_of(CLOCK_MONOTONIC_RAW) - wall0 < 50000000ull) {}
    double ticks_per_ns = (double)(__rdtsc() - tsc0) / (double)(ns_of(CLOCK_MONOTONIC_RAW) - wall0);
    uint64_t gap_ticks = (uint64_t)(1000 * ticks_per_ns);
    uint64_t ambiguous = 0, count[BUCKETS] = {0}, off_ns[BUCKETS] = {0}, gap_ns[BUCKETS] = {0}, offcpu_gaps[BUCKETS] = {0};
    uint64_t cpu_start = ns_of(CLOCK_THREAD_CPUTIME_ID), end = ns_of(CLOCK_MONOTONIC) + (uint64_t)(seconds * 1e9);
    uint64_t c0 = cpu_start, t0 = __rdtsc(), prev = t0;
    for (;;) {
        uint64_t t = __rdtsc();
        if (t - prev > gap_ticks) {
            uint64_t tb = __rdtsc(), c1 = ns_of(CLOCK_THREAD_CPUTIME_ID), t1 = __rdtsc();
            if (t1 - tb > 2 * gap_ticks) {
                /* Switched out inside the exact read itself: the segment's end is unknown. */
                ambiguous++;
                c0 = c1; t0 = t1; prev = __rdtsc();
                continue;
            }
            t1 = tb + (t1 - tb) / 2;
            double wall = (double)(t1 - t0) / ticks_per_ns;
            double off = wall - (double)(c1 - c0);
            double gap = (double)(t - prev) / ticks_per_ns;
            int b = 0;
            while (b + 1 < (int)BUCKETS && gap >= edges_us[b + 1] * 1000) b++;
            count[b]++;
            gap_ns[b] += (uint64_t)gap;
            if (off > 500) { off_ns[b] += (uint64_t)off; offcpu_gaps[b]++; }
            c0 = c1; t0 = t1; prev = __rdtsc();
            if (ns_of(CLOCK_MONOTONIC) > end) break;
        } else {
            prev = t;
        }
    }
    double cpu_s = (double)(ns_of(CLOCK_THREAD_CPUTIME_ID) - cpu_start) / 1e9;
    printf("%.2f s of CPU, counter %.3f GHz, %llu exact reads switched out themselves (left out)\n", cpu_s,
           ticks_per_ns, (unsigned long long)ambiguous);
    printf("| gap (us) | gaps | of them off the CPU (>0.5 us) | off-CPU us per s of CPU | hidden by a gate at the upper edge: off-CPU us per s of CPU |\n|---|---:|---:|---:|---:|\n");
    double hidden = 0;
    for (unsigned b = 0; b < BUCKETS; b++) {
        hidden += off_ns[b] / 1e3 / cpu_s;
        printf("| %g-%g | %llu | %llu | %.2f | %.2f |\n", edges_us[b], edges_us[b + 1], (unsigned long long)count[b],
               (unsigned long long)offcpu_gaps[b], off_ns[b] / 1e3 / cpu_s, hidden);
    }
    return 0;
}
