/* JNI library of the report-tools fixture (Reports.java). Every native does a fixed amount of pure
 * ALU work per call (a serial LCG chain, no memory traffic). NATIVEACCT_TEST_SLOWDOWN=K multiplies the
 * work of Reports.hash by K, and only of it. Each native also measures the thread CPU its own work took
 * (Reports.ownNs), the truth a test compares the agent with: on a shared host, the same work takes more
 * CPU in one run than in another. */
#include <jni.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static unsigned long chain(long steps) {
    unsigned long x = sink | 1;
    for (long i = 0; i < steps; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}

static long slowdown(void) {
    static long factor;
    if (factor == 0) {
        const char *v = getenv("NATIVEACCT_TEST_SLOWDOWN");
        factor = v ? atol(v) : 1;
        if (factor < 1) factor = 1;
    }
    return factor;
}

#define STEPS_PER_ROUND 10000L

enum { HASH, MIX, EXTRA, NATIVES };
static long own_ns[NATIVES];

static long thread_cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static jlong timed_chain(long steps, int native) {
    long start = thread_cpu_ns();
    unsigned long x = chain(steps);
    sink = x;
    __atomic_add_fetch(&own_ns[native], thread_cpu_ns() - start, __ATOMIC_RELAXED);
    return (jlong)(x & 0xff);
}

JNIEXPORT jlong JNICALL Java_Reports_hash(JNIEnv *env, jclass cls, jint rounds) {
    return timed_chain(rounds * STEPS_PER_ROUND * slowdown(), HASH);
}

JNIEXPORT jlong JNICALL Java_Reports_mix(JNIEnv *env, jclass cls, jint rounds) {
    return timed_chain(rounds * STEPS_PER_ROUND, MIX);
}

/* The CPU the work of native `which` (0 hash, 1 mix, 2 extra) took, over all calls so far. */
JNIEXPORT jlong JNICALL Java_Reports_ownNs(JNIEnv *env, jclass cls, jint which) {
    return __atomic_load_n(&own_ns[which], __ATOMIC_RELAXED);
}

/* `n` upcalls to Reports.back through CallStaticIntMethod. */
JNIEXPORT jint JNICALL Java_Reports_callBack(JNIEnv *env, jclass cls, jint n) {
    jmethodID back = (*env)->GetStaticMethodID(env, cls, "back", "(I)I");
    jint total = 0;
    for (jint i = 0; i < n; i++) total += (*env)->CallStaticIntMethod(env, cls, back, i);
    return total;
}

JNIEXPORT jlong JNICALL Java_Reports_extra(JNIEnv *env, jclass cls, jint rounds) {
    return timed_chain(rounds * STEPS_PER_ROUND, EXTRA);
}
