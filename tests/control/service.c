/* Natives of Service.java: ground truth measured with the calling thread's own CPU clock. */
#include <jni.h>
#include <time.h>

static __thread long long native_ns, spin_calls, upcalls;

static long long thread_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

JNIEXPORT jlong JNICALL Java_Service_spin(JNIEnv *env, jclass cls, jlong nanos) {
    static jmethodID tick;
    if (!tick) tick = (*env)->GetStaticMethodID(env, cls, "tick", "()V");
    (*env)->CallStaticVoidMethod(env, cls, tick);
    upcalls++;
    spin_calls++;
    long long start = thread_cpu(), now = start;
    volatile unsigned long long x = 1;
    while (now - start < nanos) {
        for (int i = 0; i < 1000; i++) x = x * 2862933555777941757ULL + 3037000493ULL;
        now = thread_cpu();
    }
    native_ns += now - start;
    return now;
}

JNIEXPORT jlongArray JNICALL Java_Service_truth(JNIEnv *env, jclass cls) {
    jlong values[4] = {thread_cpu(), native_ns, spin_calls, upcalls};
    jlongArray out = (*env)->NewLongArray(env, 4);
    (*env)->SetLongArrayRegion(env, out, 0, 4, values);
    return out;
}

JNIEXPORT jlong JNICALL Java_Service_cpuNow(JNIEnv *env, jclass cls) { return thread_cpu(); }
