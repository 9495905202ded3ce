/* Native side of the transition microbenchmark: trivial natives, and natives that loop over trivial JNI
 * upcalls. Built by scripts/bench-transitions with gcc against the JDK's headers. */
#include <jni.h>

JNIEXPORT jint JNICALL Java_Transitions_nopStatic(JNIEnv *env, jclass cls, jint x) {
    (void)env;
    (void)cls;
    return x + 1;
}

JNIEXPORT jint JNICALL Java_Transitions_nopInstance(JNIEnv *env, jobject self, jint x) {
    (void)env;
    (void)self;
    return x + 2;
}

JNIEXPORT jint JNICALL Java_Transitions_upcallStatic(JNIEnv *env, jclass cls, jint n) {
    jmethodID up = (*env)->GetStaticMethodID(env, cls, "up", "(I)I");
    jint acc = 0;
    for (jint i = 0; i < n && up != NULL; i++) {
        acc = (*env)->CallStaticIntMethod(env, cls, up, acc);
    }
    return acc;
}

JNIEXPORT jint JNICALL Java_Transitions_upcallStaticA(JNIEnv *env, jclass cls, jint n) {
    jmethodID up = (*env)->GetStaticMethodID(env, cls, "up", "(I)I");
    jint acc = 0;
    jvalue arg;
    for (jint i = 0; i < n && up != NULL; i++) {
        arg.i = acc;
        acc = (*env)->CallStaticIntMethodA(env, cls, up, &arg);
    }
    return acc;
}

JNIEXPORT jint JNICALL Java_Transitions_upcallVirtual(JNIEnv *env, jclass cls, jobject target, jint n) {
    jmethodID up = (*env)->GetMethodID(env, cls, "upInstance", "(I)I");
    jint acc = 0;
    for (jint i = 0; i < n && up != NULL; i++) {
        acc = (*env)->CallIntMethod(env, target, up, acc);
    }
    return acc;
}

JNIEXPORT jint JNICALL Java_Transitions_nestedOuter(JNIEnv *env, jclass cls, jint n) {
    jmethodID up = (*env)->GetStaticMethodID(env, cls, "upNested", "(I)I");
    jint acc = 0;
    for (jint i = 0; i < n && up != NULL; i++) {
        acc = (*env)->CallStaticIntMethod(env, cls, up, acc);
    }
    return acc;
}

/* N calls of a JNI function that runs no Java (ExceptionCheck: JNA's dispatcher calls it after every
 * call; the agent counts it in its counting wrapper). */
JNIEXPORT jint JNICALL Java_Transitions_jniCounted(JNIEnv *env, jclass cls, jint n) {
    (void)cls;
    jint acc = 0;
    for (jint i = 0; i < n; i++) {
        acc += (*env)->ExceptionCheck(env) ? 2 : 1;
    }
    return acc;
}

/* The cost of one bare rdtsc on this host, in this run: CPU ns per read over n back-to-back reads. The
 * targets are stated as multiples of it, since hosts differ (10-25 ns have been seen). */
#include <time.h>
#include <x86intrin.h>

static double thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

JNIEXPORT jdouble JNICALL Java_Transitions_rdtscNs(JNIEnv *env, jclass cls, jint n) {
    (void)env;
    (void)cls;
    unsigned long long fold = 0;
    double start = thread_cpu_ns();
    for (jint i = 0; i < n; i++) {
        fold += __rdtsc();
    }
    double elapsed = thread_cpu_ns() - start;
    /* Keep the loop: the compiler must assume the sum is used. */
    __asm__ volatile("" : : "r"(fold));
    return elapsed / n;
}
