/* JNI library of the report-tools fixture (Reports.java). Every native does a fixed amount of pure
 * ALU work per call (a serial LCG chain, no memory traffic), so its CPU time per call is the same from
 * run to run. NATIVEACCT_TEST_SLOWDOWN=K multiplies the work of Reports.hash by K, and only of it. */
#include <jni.h>
#include <stdlib.h>

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

JNIEXPORT jlong JNICALL Java_Reports_hash(JNIEnv *env, jclass cls, jint rounds) {
    unsigned long x = chain(rounds * STEPS_PER_ROUND * slowdown());
    sink = x;
    return (jlong)(x & 0xff);
}

JNIEXPORT jlong JNICALL Java_Reports_mix(JNIEnv *env, jclass cls, jint rounds) {
    unsigned long x = chain(rounds * STEPS_PER_ROUND);
    sink = x;
    return (jlong)(x & 0xff);
}

/* `n` upcalls to Reports.back through CallStaticIntMethod. */
JNIEXPORT jint JNICALL Java_Reports_callBack(JNIEnv *env, jclass cls, jint n) {
    jmethodID back = (*env)->GetStaticMethodID(env, cls, "back", "(I)I");
    jint total = 0;
    for (jint i = 0; i < n; i++) total += (*env)->CallStaticIntMethod(env, cls, back, i);
    return total;
}

JNIEXPORT jlong JNICALL Java_Reports_extra(JNIEnv *env, jclass cls, jint rounds) {
    return Java_Reports_mix(env, cls, rounds);
}
