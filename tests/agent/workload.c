/* JNI library of the end-to-end workload (Workload.java). Ground truth for the CPU split is measured
 * here with CLOCK_THREAD_CPUTIME_ID, independently of the agent. */
#include <jni.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static __thread jlong native_truth_ns; /* CPU ns this thread spent inside spin() */

static jlong thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (jlong)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static volatile unsigned long spin_sink;

static void burn(jlong nanos) {
    jlong start = thread_cpu_ns();
    unsigned long x = spin_sink;
    while (thread_cpu_ns() - start < nanos) {
        for (int i = 0; i < 2000; i++) x = x * 2862933555777941757UL + 3037000493UL;
    }
    spin_sink = x;
}

JNIEXPORT void JNICALL Java_Workload_spin(JNIEnv *env, jclass cls, jlong nanos) {
    jlong start = thread_cpu_ns();
    burn(nanos);
    native_truth_ns += thread_cpu_ns() - start;
}

/* A native that blocks and then works: sleeps 6 x `nanos` of wall time, then burns `nanos` of CPU (wall time
 * 7 x its CPU). All of its CPU, the sleep's included, is native ground truth. */
JNIEXPORT void JNICALL Java_Workload_sleepThenSpin(JNIEnv *env, jclass cls, jlong nanos) {
    jlong start = thread_cpu_ns();
    struct timespec nap = {(time_t)(6 * nanos / 1000000000LL), (long)(6 * nanos % 1000000000LL)};
    while (nanosleep(&nap, &nap) != 0) {}
    burn(nanos);
    native_truth_ns += thread_cpu_ns() - start;
}

/* CPU burned so far by daemonSpin, published as it goes (the daemon is still inside it at exit). */
static volatile jlong daemon_burned_ns;

JNIEXPORT void JNICALL Java_Workload_daemonSpin(JNIEnv *env, jclass cls, jlong nanos) {
    jlong start = thread_cpu_ns(), now;
    unsigned long x = spin_sink;
    jlong base = daemon_burned_ns;
    while ((now = thread_cpu_ns()) - start < nanos) {
        for (int i = 0; i < 2000; i++) x = x * 2862933555777941757UL + 3037000493UL;
        daemon_burned_ns = base + (now - start);
    }
    spin_sink = x;
}

JNIEXPORT jlong JNICALL Java_Workload_daemonBurnedNs(JNIEnv *env, jclass cls) { return daemon_burned_ns; }

/* A thread's CPU over its whole life: the first threadTruth() on a thread takes a slot and sets a key
 * whose destructor reads the thread's CPU clock as the thread ends, after everything the JVM did on
 * it. The agent's figures for a thread cover a part of its life (JVMTI ThreadStart to ThreadEnd),
 * so this bounds them from above. */
#define END_SLOTS 256
static struct {
    jlong cpu_ns;
    int done;
} thread_ends[END_SLOTS];
static int end_slots_used;
static pthread_key_t end_key;
static pthread_once_t end_key_once = PTHREAD_ONCE_INIT;

static void record_end(void *slot) {
    int i = (int)((long)slot - 1);
    thread_ends[i].cpu_ns = thread_cpu_ns();
    __atomic_store_n(&thread_ends[i].done, 1, __ATOMIC_RELEASE);
}

static void make_end_key(void) { pthread_key_create(&end_key, record_end); }

/* This thread's slot, taken on its first call; -1 when all are taken. */
static jlong end_slot(void) {
    pthread_once(&end_key_once, make_end_key);
    void *slot = pthread_getspecific(end_key);
    if (slot == NULL) {
        int i = __atomic_fetch_add(&end_slots_used, 1, __ATOMIC_RELAXED);
        if (i >= END_SLOTS) return -1;
        slot = (void *)(long)(i + 1);
        pthread_setspecific(end_key, slot);
    }
    return (jlong)(long)slot - 1;
}

JNIEXPORT jlongArray JNICALL Java_Workload_threadTruth(JNIEnv *env, jclass cls) {
    jlong values[3] = {thread_cpu_ns(), native_truth_ns, end_slot()};
    jlongArray out = (*env)->NewLongArray(env, 3);
    (*env)->SetLongArrayRegion(env, out, 0, 3, values);
    return out;
}

/* The CPU time of the thread that took `slot` over its whole life, once its key destructor ran
 * (waits up to 60 s: under qemu a thread's exit is slow); -1 if it never did. */
JNIEXPORT jlong JNICALL Java_Workload_lifeCpuNs(JNIEnv *env, jclass cls, jint slot) {
    if (slot < 0 || slot >= END_SLOTS) return -1;
    for (int waited_ms = 0; !__atomic_load_n(&thread_ends[slot].done, __ATOMIC_ACQUIRE); waited_ms++) {
        if (waited_ms >= 60000) return -1;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return thread_ends[slot].cpu_ns;
}

JNIEXPORT jint JNICALL Java_Workload_nest(JNIEnv *env, jclass cls, jint depth) {
    if (depth <= 0) return 0;
    jmethodID m = (*env)->GetStaticMethodID(env, cls, "nestJava", "(I)I");
    return (*env)->CallStaticIntMethod(env, cls, m, depth);
}

JNIEXPORT void JNICALL Java_Workload_throwFromNative(JNIEnv *env, jclass cls, jint code) {
    jclass ise = (*env)->FindClass(env, "java/lang/IllegalStateException");
    char msg[32];
    snprintf(msg, sizeof msg, "native %d", (int)code);
    (*env)->ThrowNew(env, ise, msg);
}

JNIEXPORT void JNICALL Java_Workload_callJavaThatThrows(JNIEnv *env, jclass cls) {
    jmethodID m = (*env)->GetStaticMethodID(env, cls, "thrower", "()V");
    (*env)->CallStaticVoidMethod(env, cls, m);
    /* return with the exception pending: Java sees it */
}

/* ---- every call style ------------------------------------------------------------------------ */

#define SIG12 "(IJDLjava/lang/Object;IJDFSBCZ)"
#define A_ 1
#define B_ ((jlong)1 << 40)
#define C_ 2.5
#define E_ (-7)
#define F_ (-((jlong)1 << 33))
#define G_ 1000000.25
#define H_ 3.5f
#define I_ ((jshort)-300)
#define J_ ((jbyte)-5)
#define K_ ((jchar)65000)
#define L_ JNI_TRUE
#define ARGS12(marker) A_, B_, C_, (marker), E_, F_, G_, H_, I_, J_, K_, L_

static jlong expected_sum(void) {
    return A_ + B_ * 3 + (jlong)(C_ * 5) + 7 + E_ * 11LL + F_ * 13 + (jlong)(G_ * 17) + (jlong)(H_ * 19) +
           I_ * 23LL + J_ * 29LL + K_ * 31LL + 37;
}

static void fill_jvalues(jvalue *v, jobject marker) {
    v[0].i = A_; v[1].j = B_; v[2].d = C_; v[3].l = marker; v[4].i = E_; v[5].j = F_;
    v[6].d = G_; v[7].f = H_; v[8].s = I_; v[9].b = J_; v[10].c = K_; v[11].z = L_;
}

static jclass g_cls;
static jfieldID g_last_sum;
static int g_failures;

static void check_sum(JNIEnv *env, const char *what) {
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionDescribe(env);
        fprintf(stderr, "workload: %s threw\n", what);
        g_failures++;
        return;
    }
    jlong got = (*env)->GetStaticLongField(env, g_cls, g_last_sum);
    if (got != expected_sum()) {
        fprintf(stderr, "workload: %s passed wrong arguments: sum %lld, expected %lld\n", what, (long long)got,
                (long long)expected_sum());
        g_failures++;
    }
    (*env)->SetStaticLongField(env, g_cls, g_last_sum, 0);
}

static void check_value(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "workload: %s returned a wrong value\n", what);
        g_failures++;
    }
}

/* Expected return values, per return type, derived from the sum like the Java side does. */
#define EXP_Boolean ((expected_sum() & 1) == 1)
#define EXP_Byte ((jbyte)expected_sum())
#define EXP_Char ((jchar)expected_sum())
#define EXP_Short ((jshort)expected_sum())
#define EXP_Int ((jint)expected_sum())
#define EXP_Long (expected_sum())
#define EXP_Float ((jfloat)(expected_sum() % 1000))
#define EXP_Double ((jdouble)expected_sum())

/* V-style helpers: a variadic function of our own that hands its va_list to Call...MethodV. */
#define DEFINE_V_HELPERS(Type, jtype)                                                                  \
    static jtype callV_##Type(JNIEnv *env, jobject obj, jmethodID m, ...) {                            \
        va_list ap; va_start(ap, m);                                                                   \
        jtype r = (*env)->Call##Type##MethodV(env, obj, m, ap);                                        \
        va_end(ap); return r;                                                                          \
    }                                                                                                  \
    static jtype callStaticV_##Type(JNIEnv *env, jclass cls, jmethodID m, ...) {                       \
        va_list ap; va_start(ap, m);                                                                   \
        jtype r = (*env)->CallStatic##Type##MethodV(env, cls, m, ap);                                  \
        va_end(ap); return r;                                                                          \
    }                                                                                                  \
    static jtype callNonvirtualV_##Type(JNIEnv *env, jobject obj, jclass cls, jmethodID m, ...) {      \
        va_list ap; va_start(ap, m);                                                                   \
        jtype r = (*env)->CallNonvirtual##Type##MethodV(env, obj, cls, m, ap);                         \
        va_end(ap); return r;                                                                          \
    }

#include <stdarg.h>
DEFINE_V_HELPERS(Object, jobject)
DEFINE_V_HELPERS(Boolean, jboolean)
DEFINE_V_HELPERS(Byte, jbyte)
DEFINE_V_HELPERS(Char, jchar)
DEFINE_V_HELPERS(Short, jshort)
DEFINE_V_HELPERS(Int, jint)
DEFINE_V_HELPERS(Long, jlong)
DEFINE_V_HELPERS(Float, jfloat)
DEFINE_V_HELPERS(Double, jdouble)

static void callV_Void(JNIEnv *env, jobject obj, jmethodID m, ...) {
    va_list ap; va_start(ap, m); (*env)->CallVoidMethodV(env, obj, m, ap); va_end(ap);
}
static void callStaticV_Void(JNIEnv *env, jclass cls, jmethodID m, ...) {
    va_list ap; va_start(ap, m); (*env)->CallStaticVoidMethodV(env, cls, m, ap); va_end(ap);
}
static void callNonvirtualV_Void(JNIEnv *env, jobject obj, jclass cls, jmethodID m, ...) {
    va_list ap; va_start(ap, m); (*env)->CallNonvirtualVoidMethodV(env, obj, cls, m, ap); va_end(ap);
}
static jobject newObjectV(JNIEnv *env, jclass cls, jmethodID m, ...) {
    va_list ap; va_start(ap, m); jobject r = (*env)->NewObjectV(env, cls, m, ap); va_end(ap); return r;
}

/* One call of return type Type: it must return the expected value, and its arguments must add up. */
#define CHECK_RETURN(Type, call, what) check_value((call) == EXP_##Type, what); check_sum(env, what)

/* All nine calls of one non-void return type: {plain, A, V} x {virtual, static, nonvirtual}. */
#define CALL_ALL(Type, ret_sig)                                                                        \
    do {                                                                                               \
        jmethodID sm = (*env)->GetStaticMethodID(env, g_cls, "s" #Type, SIG12 ret_sig);                \
        jmethodID im = (*env)->GetMethodID(env, g_cls, "i" #Type, SIG12 ret_sig);                      \
        CHECK_RETURN(Type, (*env)->Call##Type##Method(env, self, im, ARGS12(marker)), "Call" #Type "Method"); \
        CHECK_RETURN(Type, (*env)->Call##Type##MethodA(env, self, im, args), "Call" #Type "MethodA");  \
        CHECK_RETURN(Type, callV_##Type(env, self, im, ARGS12(marker)), "Call" #Type "MethodV");       \
        CHECK_RETURN(Type, (*env)->CallStatic##Type##Method(env, g_cls, sm, ARGS12(marker)), "CallStatic" #Type "Method"); \
        CHECK_RETURN(Type, (*env)->CallStatic##Type##MethodA(env, g_cls, sm, args), "CallStatic" #Type "MethodA"); \
        CHECK_RETURN(Type, callStaticV_##Type(env, g_cls, sm, ARGS12(marker)), "CallStatic" #Type "MethodV"); \
        CHECK_RETURN(Type, (*env)->CallNonvirtual##Type##Method(env, self, g_cls, im, ARGS12(marker)), "CallNonvirtual" #Type "Method"); \
        CHECK_RETURN(Type, (*env)->CallNonvirtual##Type##MethodA(env, self, g_cls, im, args), "CallNonvirtual" #Type "MethodA"); \
        CHECK_RETURN(Type, callNonvirtualV_##Type(env, self, g_cls, im, ARGS12(marker)), "CallNonvirtual" #Type "MethodV"); \
    } while (0)

#define EXP_Object marker
#define SAME_OBJECT_CHECK 1

JNIEXPORT jint JNICALL Java_Workload_callEveryStyle(JNIEnv *env, jobject self, jobject marker) {
    g_cls = (*env)->GetObjectClass(env, self);
    g_last_sum = (*env)->GetStaticFieldID(env, g_cls, "lastSum", "J");
    g_failures = 0;
    jvalue args[12];
    fill_jvalues(args, marker);

    /* Object returns are local references: compare identity with IsSameObject. */
#undef EXP_Object
#define EXP_Object marker
    {
        jmethodID sm = (*env)->GetStaticMethodID(env, g_cls, "sObject", SIG12 "Ljava/lang/Object;");
        jmethodID im = (*env)->GetMethodID(env, g_cls, "iObject", SIG12 "Ljava/lang/Object;");
        jobject r;
#define SAME(expr, what) r = (expr); check_value((*env)->IsSameObject(env, r, marker), what); check_sum(env, what)
        SAME((*env)->CallObjectMethod(env, self, im, ARGS12(marker)), "CallObjectMethod");
        SAME((*env)->CallObjectMethodA(env, self, im, args), "CallObjectMethodA");
        SAME(callV_Object(env, self, im, ARGS12(marker)), "CallObjectMethodV");
        SAME((*env)->CallStaticObjectMethod(env, g_cls, sm, ARGS12(marker)), "CallStaticObjectMethod");
        SAME((*env)->CallStaticObjectMethodA(env, g_cls, sm, args), "CallStaticObjectMethodA");
        SAME(callStaticV_Object(env, g_cls, sm, ARGS12(marker)), "CallStaticObjectMethodV");
        SAME((*env)->CallNonvirtualObjectMethod(env, self, g_cls, im, ARGS12(marker)), "CallNonvirtualObjectMethod");
        SAME((*env)->CallNonvirtualObjectMethodA(env, self, g_cls, im, args), "CallNonvirtualObjectMethodA");
        SAME(callNonvirtualV_Object(env, self, g_cls, im, ARGS12(marker)), "CallNonvirtualObjectMethodV");
#undef SAME
    }
    CALL_ALL(Boolean, "Z");
    CALL_ALL(Byte, "B");
    CALL_ALL(Char, "C");
    CALL_ALL(Short, "S");
    CALL_ALL(Int, "I");
    CALL_ALL(Long, "J");
    CALL_ALL(Float, "F");
    CALL_ALL(Double, "D");
    {
        jmethodID sm = (*env)->GetStaticMethodID(env, g_cls, "sVoid", SIG12 "V");
        jmethodID im = (*env)->GetMethodID(env, g_cls, "iVoid", SIG12 "V");
        (*env)->CallVoidMethod(env, self, im, ARGS12(marker)); check_sum(env, "CallVoidMethod");
        (*env)->CallVoidMethodA(env, self, im, args); check_sum(env, "CallVoidMethodA");
        callV_Void(env, self, im, ARGS12(marker)); check_sum(env, "CallVoidMethodV");
        (*env)->CallStaticVoidMethod(env, g_cls, sm, ARGS12(marker)); check_sum(env, "CallStaticVoidMethod");
        (*env)->CallStaticVoidMethodA(env, g_cls, sm, args); check_sum(env, "CallStaticVoidMethodA");
        callStaticV_Void(env, g_cls, sm, ARGS12(marker)); check_sum(env, "CallStaticVoidMethodV");
        (*env)->CallNonvirtualVoidMethod(env, self, g_cls, im, ARGS12(marker)); check_sum(env, "CallNonvirtualVoidMethod");
        (*env)->CallNonvirtualVoidMethodA(env, self, g_cls, im, args); check_sum(env, "CallNonvirtualVoidMethodA");
        callNonvirtualV_Void(env, self, g_cls, im, ARGS12(marker)); check_sum(env, "CallNonvirtualVoidMethodV");
    }
    {
        jmethodID ctor = (*env)->GetMethodID(env, g_cls, "<init>", SIG12 "V");
        jobject o;
        o = (*env)->NewObject(env, g_cls, ctor, ARGS12(marker)); check_value(o != NULL, "NewObject"); check_sum(env, "NewObject");
        o = (*env)->NewObjectA(env, g_cls, ctor, args); check_value(o != NULL, "NewObjectA"); check_sum(env, "NewObjectA");
        o = newObjectV(env, g_cls, ctor, ARGS12(marker)); check_value(o != NULL, "NewObjectV"); check_sum(env, "NewObjectV");
    }
    return 93 - g_failures;
}

/* ---- an attached native thread --------------------------------------------------------------- */

static JavaVM *g_vm;
#define ATTACHED_NATIVE_NS 50000000LL
struct attached_job { jclass cls; int calls; int result; };

static void *attached_main(void *arg) {
    struct attached_job *job = arg;
    JNIEnv *env;
    JavaVMAttachArgs attach = {JNI_VERSION_1_8, "attached-native", NULL};
    if ((*g_vm)->AttachCurrentThread(g_vm, (void **)&env, &attach) != JNI_OK) return NULL;
    burn(ATTACHED_NATIVE_NS); /* native work before the first upcall: the agent must count it as native */
    jmethodID m = (*env)->GetStaticMethodID(env, job->cls, "fromNative", "(I)I");
    int total = 0;
    for (int i = 0; i < job->calls; i++) total += (*env)->CallStaticIntMethod(env, job->cls, m, i);
    job->result = total;
    (*g_vm)->DetachCurrentThread(g_vm);
    return NULL;
}

JNIEXPORT jint JNICALL Java_Workload_runAttachedThread(JNIEnv *env, jclass cls, jint calls) {
    (*env)->GetJavaVM(env, &g_vm);
    struct attached_job job = {(*env)->NewGlobalRef(env, cls), calls, -1};
    pthread_t t;
    pthread_create(&t, NULL, attached_main, &job);
    pthread_join(t, NULL);
    (*env)->DeleteGlobalRef(env, job.cls);
    return job.result;
}
