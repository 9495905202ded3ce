/* The native side of tests/agent/Boundary.java: fixed C work, upcalls, cheap JNI functions. */
#include <jni.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static long long cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Fixed C work: an integer hash chain the compiler cannot fold. */
static __attribute__((noinline)) uint64_t c_work(int n, uint64_t x) {
    for (int i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

/* `calls` cheap JNI functions (a multiple of 3), in a fixed cycle. */
static __attribute__((noinline)) jlong cheap_jni(JNIEnv *env, jintArray array, jclass cls, int calls) {
    jlong acc = 0;
    for (int j = 0; j < calls; j += 3) {
        acc += (*env)->GetArrayLength(env, array);
        acc += (*env)->IsSameObject(env, array, cls);
        acc += (*env)->ExceptionCheck(env);
    }
    return acc;
}

JNIEXPORT jlong JNICALL Java_Boundary_mixed(JNIEnv *env, jclass cls, jlong until_ns, jint c, jint java,
                                            jint jni) {
    jmethodID work = (*env)->GetStaticMethodID(env, cls, "javaWork", "(I)J");
    jintArray array = (*env)->NewIntArray(env, 16);
    uint64_t x = 88172645463325252ULL;
    jlong rounds = 0;
    while (cpu_ns() < until_ns) {
        for (int r = 0; r < 1000; r++) {
            x = c_work(c, x);
            x += (uint64_t)(*env)->CallStaticLongMethod(env, cls, work, java);
            x += (uint64_t)cheap_jni(env, array, cls, jni);
        }
        rounds += 1000;
    }
    (*env)->DeleteLocalRef(env, array);
    return rounds + (jlong)(x & 1);
}

/* Every JNI function `exercise` calls, with the fixture's own count of its calls. */
#define MAX_COUNTED 64
static const char *counted_names[MAX_COUNTED];
static long long counted_calls[MAX_COUNTED];
static int counted_used;

static void count(const char *name) {
    for (int i = 0; i < counted_used; i++) {
        if (strcmp(counted_names[i], name) == 0) {
            counted_calls[i]++;
            return;
        }
    }
    if (counted_used < MAX_COUNTED) {
        counted_names[counted_used] = name;
        counted_calls[counted_used++] = 1;
    }
}

/* Call JNI function `f` through the table and count it. */
#define JNI(f, ...) (count(#f), (*env)->f(env, __VA_ARGS__))
#define JNI0(f) (count(#f), (*env)->f(env))

JNIEXPORT void JNICALL Java_Boundary_exercise(JNIEnv *env, jclass cls, jint reps) {
    for (jint r = 0; r < reps; r++) {
        (void)JNI0(GetVersion);
        JNI(PushLocalFrame, 32);
        jclass string = JNI(FindClass, "java/lang/String");
        jclass object = JNI(GetSuperclass, string);
        (void)JNI(IsAssignableFrom, string, object);
        jstring text = JNI(NewStringUTF, "boundary");
        (void)JNI(GetStringLength, text);
        (void)JNI(GetStringUTFLength, text);
        const char *utf = JNI(GetStringUTFChars, text, NULL);
        JNI(ReleaseStringUTFChars, text, utf);
        jchar chars[4];
        JNI(GetStringRegion, text, 0, 4, chars);
        jclass of_text = JNI(GetObjectClass, text);
        (void)JNI(IsInstanceOf, text, of_text);
        (void)JNI(IsSameObject, of_text, string);
        jobject global = JNI(NewGlobalRef, text);
        (void)JNI(GetObjectRefType, global);
        JNI(DeleteGlobalRef, global);
        jweak weak = JNI(NewWeakGlobalRef, text);
        JNI(DeleteWeakGlobalRef, weak);
        jobject local = JNI(NewLocalRef, text);
        JNI(DeleteLocalRef, local);
        (void)JNI(EnsureLocalCapacity, 16);
        jintArray ints = JNI(NewIntArray, 8);
        jint values[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        JNI(SetIntArrayRegion, ints, 0, 8, values);
        JNI(GetIntArrayRegion, ints, 0, 8, values);
        (void)JNI(GetArrayLength, ints);
        jint *elements = JNI(GetIntArrayElements, ints, NULL);
        JNI(ReleaseIntArrayElements, ints, elements, 0);
        void *critical = JNI(GetPrimitiveArrayCritical, ints, NULL);
        JNI(ReleasePrimitiveArrayCritical, ints, critical, 0);
        jobjectArray objects = JNI(NewObjectArray, 2, string, text);
        JNI(SetObjectArrayElement, objects, 1, NULL);
        (void)JNI(GetObjectArrayElement, objects, 0);
        jfieldID sink = JNI(GetStaticFieldID, cls, "sink", "J");
        JNI(SetStaticLongField, cls, sink, JNI(GetStaticLongField, cls, sink) + 1);
        jmethodID empty = JNI(GetStaticMethodID, cls, "empty", "(I)J");
        (void)JNI(CallStaticLongMethod, cls, empty, r);
        (void)JNI(GetMethodID, string, "length", "()I");
        (void)JNI(MonitorEnter, text);
        (void)JNI(MonitorExit, text);
        jclass error = JNI(FindClass, "java/lang/IllegalStateException");
        (void)JNI(ThrowNew, error, "thrown by the fixture");
        (void)JNI0(ExceptionCheck);
        jthrowable thrown = JNI0(ExceptionOccurred);
        JNI0(ExceptionClear);
        (void)JNI(Throw, thrown);
        JNI0(ExceptionClear);
        JavaVM *vm;
        (void)JNI(GetJavaVM, &vm);
        JNI(PopLocalFrame, NULL);
    }
}

JNIEXPORT jstring JNICALL Java_Boundary_jniCounts(JNIEnv *env, jclass cls) {
    (void)cls;
    static char text[4096];
    size_t used = 0;
    for (int i = 0; i < counted_used && used < sizeof text - 80; i++) {
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%s=%lld", i ? " " : "",
                                 counted_names[i], counted_calls[i]);
    }
    return (*env)->NewStringUTF(env, text);
}

JNIEXPORT jlong JNICALL Java_Boundary_cOnly(JNIEnv *env, jclass cls, jlong rounds, jint c) {
    (void)env;
    (void)cls;
    uint64_t x = 88172645463325252ULL;
    for (jlong r = 0; r < rounds; r++) x = c_work(c, x);
    return (jlong)(x & 1);
}

JNIEXPORT jlong JNICALL Java_Boundary_upcallOnly(JNIEnv *env, jclass cls, jlong rounds) {
    jmethodID empty = (*env)->GetStaticMethodID(env, cls, "empty", "(I)J");
    jlong acc = 0;
    for (jlong r = 0; r < rounds; r++) acc += (*env)->CallStaticLongMethod(env, cls, empty, 1);
    return acc;
}

JNIEXPORT jlong JNICALL Java_Boundary_jniOnly(JNIEnv *env, jclass cls, jlong rounds, jint jni) {
    jintArray array = (*env)->NewIntArray(env, 16);
    jlong acc = 0;
    for (jlong r = 0; r < rounds; r++) acc += cheap_jni(env, array, cls, jni);
    (*env)->DeleteLocalRef(env, array);
    return acc;
}

JNIEXPORT jlong JNICALL Java_Boundary_cpuNs(JNIEnv *env, jclass cls) {
    (void)env;
    (void)cls;
    return cpu_ns();
}
