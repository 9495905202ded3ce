/* The native that Nested.Inner's <clinit> calls: burns the thread's CPU time and reports it. */
#include <jni.h>
#include <time.h>

static long long thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

JNIEXPORT jlong JNICALL Java_Nested_spin(JNIEnv *env, jclass cls, jlong cpu_ns) {
    (void)env;
    (void)cls;
    volatile unsigned long long x = 1;
    long long start = thread_cpu_ns();
    long long used;
    do {
        for (int i = 0; i < 100000; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        }
        used = thread_cpu_ns() - start;
    } while (used < cpu_ns);
    return used;
}
