/* JNI library of the compatibility programs (the Java classes in tests/compat/java/compat).
 *
 * It is the ground truth for JNI upcall counts: every Call*Method* / NewObject* call it makes is
 * counted here, per function (global) and per thread, right before the call. The Java side counts
 * its own native-method calls. The agent's report is then compared with these numbers. */
#include <jni.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { FUNCTION_COUNT = 93 };

/* Index = style * 30 + type * 3 + variant; style: 0 virtual, 1 nonvirtual, 2 static;
 * type: the order of TYPE_NAMES; variant: 0 "...", 1 "V" (va_list), 2 "A" (jvalue array).
 * 90..92: NewObject, NewObjectV, NewObjectA. */
static const char *const TYPE_NAMES[10] = {"Object", "Boolean", "Byte", "Char", "Short",
                                           "Int",    "Long",    "Float", "Double", "Void"};
enum { T_OBJECT, T_BOOLEAN, T_BYTE, T_CHAR, T_SHORT, T_INT, T_LONG, T_FLOAT, T_DOUBLE, T_VOID };
enum { S_VIRTUAL, S_NONVIRTUAL, S_STATIC };
enum { IDX_NEW_OBJECT = 90, IDX_NEW_OBJECT_V = 91, IDX_NEW_OBJECT_A = 92 };
#define FN_INDEX(style, type, variant) ((style) * 30 + (type) * 3 + (variant))

static long long call_counts[FUNCTION_COUNT];
static __thread long long thread_jni_calls;

static void count_call(int index) {
    __atomic_add_fetch(&call_counts[index], 1, __ATOMIC_RELAXED);
    thread_jni_calls++;
}

/* ---- bookkeeping natives (compat.Native) ---- */

JNIEXPORT jstring JNICALL Java_compat_Native_functionName(JNIEnv *env, jclass cls, jint index) {
    (void)cls;
    char name[64];
    if (index < 0 || index >= FUNCTION_COUNT) return NULL;
    if (index >= IDX_NEW_OBJECT) {
        static const char *const suffix[3] = {"", "V", "A"};
        snprintf(name, sizeof name, "NewObject%s", suffix[index - IDX_NEW_OBJECT]);
    } else {
        static const char *const style[3] = {"", "Nonvirtual", "Static"};
        static const char *const suffix[3] = {"", "V", "A"};
        snprintf(name, sizeof name, "Call%s%sMethod%s", style[index / 30],
                 TYPE_NAMES[(index % 30) / 3], suffix[index % 3]);
    }
    return (*env)->NewStringUTF(env, name);
}

JNIEXPORT jlong JNICALL Java_compat_Native_callCount(JNIEnv *env, jclass cls, jint index) {
    (void)env; (void)cls;
    if (index < 0 || index >= FUNCTION_COUNT) return -1;
    return __atomic_load_n(&call_counts[index], __ATOMIC_RELAXED);
}

JNIEXPORT jlong JNICALL Java_compat_Native_threadCallCount(JNIEnv *env, jclass cls) {
    (void)env; (void)cls;
    return thread_jni_calls;
}

/* ---- the 93-function battery (compat.Known.battery) ---- */

struct battery {
    JNIEnv *env;
    jclass target_class;   /* compat.Target */
    jobject sub_object;    /* a compat.SubTarget: virtual calls reach its overrides */
    jobject marker;        /* the object every call passes as its 4th argument */
    jmethodID instance_methods[10];
    jmethodID static_methods[10];
    jmethodID constructor;
    long long mismatches;
};

static jlong arg_long(jint a) { return (jlong)a * 3 + ((jlong)1 << 40); }
static jdouble arg_double(jint a) { return (jdouble)a * 0.5; }

/* A variadic helper `name(env, <params>, mid, ...)` that hands its va_list to (*env)->Fn: how a
 * program reaches the V-style functions. `params` and `args` name one of the three receivers below. */
#define VA_HELPER(ctype, name, Fn, params, args)                                                   \
    static ctype name(JNIEnv *env, params, jmethodID mid, ...) {                                   \
        va_list ap;                                                                                \
        va_start(ap, mid);                                                                         \
        ctype r = (*env)->Fn(env, args, mid, ap);                                                  \
        va_end(ap);                                                                                \
        return r;                                                                                  \
    }
#define VA_HELPER_VOID(name, Fn, params, args)                                                     \
    static void name(JNIEnv *env, params, jmethodID mid, ...) {                                    \
        va_list ap;                                                                                \
        va_start(ap, mid);                                                                         \
        (*env)->Fn(env, args, mid, ap);                                                            \
        va_end(ap);                                                                                \
    }
#define VIRTUAL_PARAMS jobject obj
#define VIRTUAL_ARGS obj
#define NONVIRTUAL_PARAMS jobject obj, jclass cls
#define NONVIRTUAL_ARGS obj, cls
#define STATIC_PARAMS jclass cls
#define STATIC_ARGS cls

#define DEFINE_VA_HELPERS(Name, ctype)                                                             \
    VA_HELPER(ctype, virtual_v_##Name, Call##Name##MethodV, VIRTUAL_PARAMS, VIRTUAL_ARGS)          \
    VA_HELPER(ctype, nonvirtual_v_##Name, CallNonvirtual##Name##MethodV, NONVIRTUAL_PARAMS,        \
              NONVIRTUAL_ARGS)                                                                     \
    VA_HELPER(ctype, static_v_##Name, CallStatic##Name##MethodV, STATIC_PARAMS, STATIC_ARGS)

DEFINE_VA_HELPERS(Object, jobject)
DEFINE_VA_HELPERS(Boolean, jboolean)
DEFINE_VA_HELPERS(Byte, jbyte)
DEFINE_VA_HELPERS(Char, jchar)
DEFINE_VA_HELPERS(Short, jshort)
DEFINE_VA_HELPERS(Int, jint)
DEFINE_VA_HELPERS(Long, jlong)
DEFINE_VA_HELPERS(Float, jfloat)
DEFINE_VA_HELPERS(Double, jdouble)
VA_HELPER_VOID(virtual_v_Void, CallVoidMethodV, VIRTUAL_PARAMS, VIRTUAL_ARGS)
VA_HELPER_VOID(nonvirtual_v_Void, CallNonvirtualVoidMethodV, NONVIRTUAL_PARAMS, NONVIRTUAL_ARGS)
VA_HELPER_VOID(static_v_Void, CallStaticVoidMethodV, STATIC_PARAMS, STATIC_ARGS)
VA_HELPER(jobject, new_object_v, NewObjectV, STATIC_PARAMS, STATIC_ARGS)

/* One call of function (style, variant) for return type Name; `sub` tells whether the Java
 * method that ran is SubTarget's override (virtual calls) or Target's (nonvirtual, static). */
#define INVOKE(Name, type_index, r, style, variant, sub)                                            \
    do {                                                                                           \
        jmethodID im = b->instance_methods[type_index], sm = b->static_methods[type_index];        \
        jvalue jv[4];                                                                              \
        jv[0].i = a; jv[1].j = arg_long(a); jv[2].d = arg_double(a); jv[3].l = b->marker;          \
        count_call(FN_INDEX(style, type_index, variant));                                          \
        switch ((style) * 3 + (variant)) {                                                         \
        case 0: r (*env)->Call##Name##Method(env, b->sub_object, im, a, arg_long(a),               \
                                              arg_double(a), b->marker); sub = 1; break;           \
        case 1: r virtual_v_##Name(env, b->sub_object, im, a, arg_long(a), arg_double(a),          \
                                   b->marker); sub = 1; break;                                     \
        case 2: r (*env)->Call##Name##MethodA(env, b->sub_object, im, jv); sub = 1; break;         \
        case 3: r (*env)->CallNonvirtual##Name##Method(env, b->sub_object, b->target_class, im,    \
                                                        a, arg_long(a), arg_double(a), b->marker); \
                sub = 0; break;                                                                    \
        case 4: r nonvirtual_v_##Name(env, b->sub_object, b->target_class, im, a, arg_long(a),     \
                                      arg_double(a), b->marker); sub = 0; break;                   \
        case 5: r (*env)->CallNonvirtual##Name##MethodA(env, b->sub_object, b->target_class, im,   \
                                                         jv); sub = 0; break;                      \
        case 6: r (*env)->CallStatic##Name##Method(env, b->target_class, sm, a, arg_long(a),       \
                                                    arg_double(a), b->marker); sub = 0; break;     \
        case 7: r static_v_##Name(env, b->target_class, sm, a, arg_long(a), arg_double(a),         \
                                  b->marker); sub = 0; break;                                      \
        default: r (*env)->CallStatic##Name##MethodA(env, b->target_class, sm, jv); sub = 0;       \
        }                                                                                          \
    } while (0)

/* Runs every variant of one return type; variant (style, variant) is repeated
 * (index + 1) * rounds times so that each JNI function has a count of its own. */
#define DEFINE_RUN_TYPE(Name, ctype, type_index, expected)                                          \
    static void run_##Name(struct battery *b, int rounds) {                                        \
        JNIEnv *env = b->env;                                                                      \
        for (int style = 0; style < 3; style++) {                                                  \
            for (int variant = 0; variant < 3; variant++) {                                        \
                long long reps = (long long)(FN_INDEX(style, type_index, variant) + 1) * rounds;   \
                for (long long i = 0; i < reps; i++) {                                             \
                    jint a = (jint)(i * 7 + type_index);                                           \
                    int sub = 0;                                                                   \
                    ctype r;                                                                       \
                    INVOKE(Name, type_index, r =, style, variant, sub);                            \
                    if ((*env)->ExceptionCheck(env)) {                                             \
                        (*env)->ExceptionClear(env);                                               \
                        b->mismatches++;                                                           \
                    } else if (!(expected)) {                                              \
                        b->mismatches++;                                                           \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

/* Target's methods return f(a, ...) and SubTarget's overrides f(a, ...) + 100 (see Target.java). */
DEFINE_RUN_TYPE(Boolean, jboolean, T_BOOLEAN, r == ((((a + sub) & 1) == 0) ? JNI_TRUE : JNI_FALSE))
DEFINE_RUN_TYPE(Byte, jbyte, T_BYTE, r == (jbyte)(a + 1 + 100 * sub))
DEFINE_RUN_TYPE(Char, jchar, T_CHAR, r == (jchar)(a + 2 + 100 * sub))
DEFINE_RUN_TYPE(Short, jshort, T_SHORT, r == (jshort)(a + 3 + 100 * sub))
DEFINE_RUN_TYPE(Int, jint, T_INT, r == (jint)(a + 4 + 100 * sub))
DEFINE_RUN_TYPE(Long, jlong, T_LONG, r == arg_long(a) + 5 + 100 * sub)
DEFINE_RUN_TYPE(Float, jfloat, T_FLOAT, r == (jfloat)(arg_double(a) + 6 + 100 * sub))
DEFINE_RUN_TYPE(Double, jdouble, T_DOUBLE, r == arg_double(a) + 7 + 100 * sub)

static int same_object_then_delete(JNIEnv *env, jobject r, jobject expected) {
    int same = (*env)->IsSameObject(env, r, expected) == JNI_TRUE;
    if (r != NULL) (*env)->DeleteLocalRef(env, r);
    return same;
}
/* Target.vL returns its 4th argument, SubTarget.vL returns `this`. */
DEFINE_RUN_TYPE(Object, jobject, T_OBJECT,
                same_object_then_delete(env, r, sub ? b->sub_object : b->marker))

static void run_Void(struct battery *b, int rounds) {
    JNIEnv *env = b->env;
    for (int style = 0; style < 3; style++) {
        for (int variant = 0; variant < 3; variant++) {
            long long reps = (long long)(FN_INDEX(style, T_VOID, variant) + 1) * rounds;
            for (long long i = 0; i < reps; i++) {
                jint a = (jint)(i * 7 + T_VOID);
                int sub = 0;
                INVOKE(Void, T_VOID, (void), style, variant, sub);
                (void)sub;
                if ((*env)->ExceptionCheck(env)) {
                    (*env)->ExceptionClear(env);
                    b->mismatches++;
                }
            }
        }
    }
}

static void run_new_object(struct battery *b, int rounds) {
    JNIEnv *env = b->env;
    for (int variant = 0; variant < 3; variant++) {
        int index = IDX_NEW_OBJECT + variant;
        long long reps = (long long)(index + 1) * rounds;
        for (long long i = 0; i < reps; i++) {
            jint a = (jint)(i * 7 + 11);
            jvalue jv[4];
            jv[0].i = a; jv[1].j = arg_long(a); jv[2].d = arg_double(a); jv[3].l = b->marker;
            jobject made;
            count_call(index);
            if (variant == 0)
                made = (*env)->NewObject(env, b->target_class, b->constructor, a, arg_long(a),
                                         arg_double(a), b->marker);
            else if (variant == 1)
                made = new_object_v(env, b->target_class, b->constructor, a, arg_long(a),
                                    arg_double(a), b->marker);
            else
                made = (*env)->NewObjectA(env, b->target_class, b->constructor, jv);
            if ((*env)->ExceptionCheck(env)) {
                (*env)->ExceptionClear(env);
                b->mismatches++;
            } else if (made == NULL) {
                b->mismatches++;
            } else {
                (*env)->DeleteLocalRef(env, made);
            }
        }
    }
}

/* Returns the number of wrong results (0 when every call forwarded its arguments and result). */
JNIEXPORT jlong JNICALL Java_compat_Known_battery(JNIEnv *env, jclass cls, jobject sub_object,
                                                  jobject marker, jint rounds) {
    (void)cls;
    static const char *const sig_returns[10] = {"Ljava/lang/Object;", "Z", "B", "C", "S",
                                                "I", "J", "F", "D", "V"};
    static const char *const method_suffix[10] = {"L", "Z", "B", "C", "S", "I", "J", "F", "D", "V"};
    struct battery b;
    memset(&b, 0, sizeof b);
    b.env = env;
    b.sub_object = sub_object;
    b.marker = marker;
    b.target_class = (*env)->FindClass(env, "compat/Target");
    if (b.target_class == NULL) return -1;
    for (int t = 0; t < 10; t++) {
        char name[8], sig[64];
        snprintf(sig, sizeof sig, "(IJDLjava/lang/Object;)%s", sig_returns[t]);
        snprintf(name, sizeof name, "v%s", method_suffix[t]);
        b.instance_methods[t] = (*env)->GetMethodID(env, b.target_class, name, sig);
        snprintf(name, sizeof name, "s%s", method_suffix[t]);
        b.static_methods[t] = (*env)->GetStaticMethodID(env, b.target_class, name, sig);
        if (b.instance_methods[t] == NULL || b.static_methods[t] == NULL) return -1;
    }
    b.constructor = (*env)->GetMethodID(env, b.target_class, "<init>", "(IJDLjava/lang/Object;)V");
    if (b.constructor == NULL) return -1;
    run_Object(&b, rounds);
    run_Boolean(&b, rounds);
    run_Byte(&b, rounds);
    run_Char(&b, rounds);
    run_Short(&b, rounds);
    run_Int(&b, rounds);
    run_Long(&b, rounds);
    run_Float(&b, rounds);
    run_Double(&b, rounds);
    run_Void(&b, rounds);
    run_new_object(&b, rounds);
    (*env)->DeleteLocalRef(env, b.target_class);
    return b.mismatches;
}

/* ---- compat.Known: plain, nested, throwing natives ---- */

JNIEXPORT jint JNICALL Java_compat_Known_add(JNIEnv *env, jclass cls, jint x, jint y) {
    (void)env; (void)cls;
    return x + y;
}

/* nestDown(d) -> CallStaticLongMethod(Known.nestUp(d)) -> nestDown(d - 1) ... */
JNIEXPORT jlong JNICALL Java_compat_Known_nestDown(JNIEnv *env, jclass cls, jint depth) {
    jmethodID up = (*env)->GetStaticMethodID(env, cls, "nestUp", "(I)J");
    if (up == NULL) return -1;
    count_call(FN_INDEX(S_STATIC, T_LONG, 0));
    return 1 + (*env)->CallStaticLongMethod(env, cls, up, depth);
}

JNIEXPORT void JNICALL Java_compat_Known_throwNative(JNIEnv *env, jclass cls, jint code) {
    (void)cls;
    jclass ise = (*env)->FindClass(env, "java/lang/IllegalStateException");
    if (ise == NULL) return;
    char message[48];
    snprintf(message, sizeof message, "thrown from native %d", (int)code);
    (*env)->ThrowNew(env, ise, message);
}

/* Calls Known.thrower(code), which throws; returns 1 when the exception was seen and cleared. */
JNIEXPORT jint JNICALL Java_compat_Known_callThrower(JNIEnv *env, jclass cls, jint code) {
    jmethodID thrower = (*env)->GetStaticMethodID(env, cls, "thrower", "(I)V");
    if (thrower == NULL) return -1;
    count_call(FN_INDEX(S_STATIC, T_VOID, 0));
    (*env)->CallStaticVoidMethod(env, cls, thrower, code);
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        return 1;
    }
    return 0;
}

/* ---- compat.Churn ---- */

JNIEXPORT jint JNICALL Java_compat_Churn_ping(JNIEnv *env, jclass cls, jint x) {
    (void)env; (void)cls;
    return x ^ 0x5a5a;
}

/* Makes `n` upcalls to Churn.back(int) through CallStaticIntMethodA; returns their sum. */
JNIEXPORT jlong JNICALL Java_compat_Churn_upcalls(JNIEnv *env, jclass cls, jint n) {
    jmethodID back = (*env)->GetStaticMethodID(env, cls, "back", "(I)I");
    if (back == NULL) return -1;
    jlong sum = 0;
    for (jint i = 0; i < n; i++) {
        jvalue arg;
        arg.i = i;
        count_call(FN_INDEX(S_STATIC, T_INT, 2));
        sum += (*env)->CallStaticIntMethodA(env, cls, back, &arg);
    }
    return sum;
}

/* ---- compat.VThreads ---- */

/* One upcall to VThreads.back(int) through CallStaticShortMethodV. */
JNIEXPORT jint JNICALL Java_compat_VThreads_vping(JNIEnv *env, jclass cls, jint x) {
    jmethodID back = (*env)->GetStaticMethodID(env, cls, "back", "(I)S");
    if (back == NULL) return -1;
    count_call(FN_INDEX(S_STATIC, T_SHORT, 1));
    return static_v_Short(env, cls, back, x);
}

/* Blocks the carrier inside native code for `micros`, then spins for `spin_micros` of CPU. */
JNIEXPORT void JNICALL Java_compat_VThreads_vblock(JNIEnv *env, jclass cls, jint micros,
                                                   jint spin_micros) {
    (void)env; (void)cls;
    struct timespec pause = {0, (long)micros * 1000L};
    nanosleep(&pause, NULL);
    struct timespec start, now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    do {
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000000000LL + (now.tv_nsec - start.tv_nsec) <
             (long long)spin_micros * 1000LL);
}

/* ---- compat.GcHeavy ---- */

/* Builds a java.util.ArrayList of `n` fresh Strings through NewObject + CallBooleanMethod. */
JNIEXPORT jobject JNICALL Java_compat_GcHeavy_fill(JNIEnv *env, jclass cls, jint n) {
    (void)cls;
    jclass list_class = (*env)->FindClass(env, "java/util/ArrayList");
    if (list_class == NULL) return NULL;
    jmethodID init = (*env)->GetMethodID(env, list_class, "<init>", "(I)V");
    jmethodID add = (*env)->GetMethodID(env, list_class, "add", "(Ljava/lang/Object;)Z");
    if (init == NULL || add == NULL) return NULL;
    count_call(IDX_NEW_OBJECT);
    jobject list = (*env)->NewObject(env, list_class, init, n);
    if (list == NULL) return NULL;
    for (jint i = 0; i < n; i++) {
        char text[32];
        snprintf(text, sizeof text, "item-%d", (int)i);
        jstring s = (*env)->NewStringUTF(env, text);
        if (s == NULL) return NULL;
        count_call(FN_INDEX(S_VIRTUAL, T_BOOLEAN, 0));
        (*env)->CallBooleanMethod(env, list, add, s);
        (*env)->DeleteLocalRef(env, s);
        if ((*env)->ExceptionCheck(env)) return NULL;
    }
    return list;
}

/* ---- compat.Pending: JNI misuse that must behave the same with and without the agent ---- */

/* Throws, then (without clearing) calls Pending.probe(int) through the three styles. */
JNIEXPORT jint JNICALL Java_compat_Pending_callWithPending(JNIEnv *env, jclass cls) {
    jmethodID probe = (*env)->GetStaticMethodID(env, cls, "probe", "(I)I");
    jclass rte = (*env)->FindClass(env, "java/lang/RuntimeException");
    if (probe == NULL || rte == NULL) return -100;
    (*env)->ThrowNew(env, rte, "pending from native");
    jvalue arg;
    arg.i = 3;
    jint r1 = (*env)->CallStaticIntMethod(env, cls, probe, 1);
    jint r2 = static_v_Int(env, cls, probe, 2);
    jint r3 = (*env)->CallStaticIntMethodA(env, cls, probe, &arg);
    return r1 * 10000 + r2 * 100 + r3;
}

/* Calls Pending.thrower() (exception now pending), then an instance method and a constructor. */
JNIEXPORT jint JNICALL Java_compat_Pending_callAfterJavaThrow(JNIEnv *env, jclass cls,
                                                              jobject receiver) {
    jmethodID thrower = (*env)->GetStaticMethodID(env, cls, "thrower", "()V");
    jmethodID instance_probe = (*env)->GetMethodID(env, cls, "instanceProbe", "(I)I");
    jmethodID init = (*env)->GetMethodID(env, cls, "<init>", "()V");
    if (thrower == NULL || instance_probe == NULL || init == NULL) return -100;
    (*env)->CallStaticVoidMethod(env, cls, thrower);
    jint r = (*env)->CallIntMethod(env, receiver, instance_probe, 7);
    jobject made = (*env)->NewObject(env, cls, init);
    return r * 10 + (made == NULL ? 0 : 1);
}

/* Calls a JNI function with a null jmethodID; `style` picks which one. */
JNIEXPORT jint JNICALL Java_compat_Pending_callNullMethodId(JNIEnv *env, jclass cls, jobject receiver,
                                                            jint style) {
    jvalue arg;
    arg.i = 0;
    switch (style) {
    case 0: return (*env)->CallStaticIntMethod(env, cls, NULL, 1);
    case 1: return static_v_Int(env, cls, NULL, 1);
    case 2: return (*env)->CallStaticIntMethodA(env, cls, NULL, &arg);
    case 3: return (*env)->CallIntMethod(env, receiver, NULL, 1);
    case 4: return (*env)->CallNonvirtualIntMethod(env, receiver, cls, NULL, 1);
    default: return (*env)->NewObject(env, cls, NULL) == NULL ? 0 : 1;
    }
}

/* ---- process CPU accounting (compat.ProcessCpu) ----
 * Each native measures its own CPU time with CLOCK_THREAD_CPUTIME_ID: the ground truth for the
 * agent's java_native and native_threads parts. */

static long long cpu_of(clockid_t clock) {
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0) return -1;
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long own_cpu(void) { return cpu_of(CLOCK_THREAD_CPUTIME_ID); }

static volatile unsigned long long spin_sink;

/* Spins until the calling thread's CPU clock has advanced by `nanos`; returns the advance. */
static long long spin_cpu(long long nanos) {
    long long start = own_cpu(), now;
    unsigned long long x = (unsigned long long)start | 1;
    do {
        for (int i = 0; i < 20000; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        now = own_cpu();
    } while (now - start < nanos);
    spin_sink += x;
    return now - start;
}

JNIEXPORT jlong JNICALL Java_compat_ProcessCpu_spinNative(JNIEnv *env, jclass cls, jlong nanos) {
    (void)env; (void)cls;
    return spin_cpu(nanos);
}

/* CPU time of thread `tid` of this process, from its kernel CPU clock (-1 once it has ended). */
JNIEXPORT jlong JNICALL Java_compat_ProcessCpu_threadCpu(JNIEnv *env, jclass cls, jint tid) {
    (void)env; (void)cls;
    return cpu_of(((~(clockid_t)tid) << 3) | 6);
}

/* Threads started from C. A native thread never attaches: it spins, records its whole CPU time,
 * then blocks for good, or sleeps `exit_after_ms` and exits. An attached thread spins natively,
 * attaches, runs ProcessCpu.javaSpin, spins in native code while attached, detaches, spins again
 * and blocks; it records its CPU clock at each step. */
enum { SLOTS = 4 };
struct c_thread {
    long long spin[3];
    jlong java_nanos;
    long long exit_after_ms;
    int attach;
    int tid;
    int done;
    long long marks[7];
};
static struct c_thread c_threads[SLOTS];
static pthread_mutex_t c_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c_cond = PTHREAD_COND_INITIALIZER;
static JavaVM *c_vm;
static jclass c_process_cpu;

static void finish_and_park(struct c_thread *t) {
    pthread_mutex_lock(&c_lock);
    t->done = 1;
    pthread_cond_broadcast(&c_cond);
    if (t->exit_after_ms >= 0) {
        pthread_mutex_unlock(&c_lock);
        struct timespec pause = {t->exit_after_ms / 1000, (t->exit_after_ms % 1000) * 1000000L};
        nanosleep(&pause, NULL);
        return;
    }
    for (;;) pthread_cond_wait(&c_cond, &c_lock);
}

static void *c_thread_main(void *arg) {
    struct c_thread *t = arg;
    t->tid = (int)syscall(SYS_gettid);
    t->marks[0] = own_cpu();
    spin_cpu(t->spin[0]);
    t->marks[1] = own_cpu();
    if (t->attach) {
        JNIEnv *env = NULL;
        if ((*c_vm)->AttachCurrentThread(c_vm, (void **)&env, NULL) == JNI_OK) {
            t->marks[2] = own_cpu();
            jmethodID java_spin = (*env)->GetStaticMethodID(env, c_process_cpu, "javaSpin", "(J)J");
            count_call(FN_INDEX(S_STATIC, T_LONG, 0));
            (*env)->CallStaticLongMethod(env, c_process_cpu, java_spin, t->java_nanos);
            t->marks[3] = own_cpu();
            spin_cpu(t->spin[1]);
            t->marks[4] = own_cpu();
            (*c_vm)->DetachCurrentThread(c_vm);
            t->marks[5] = own_cpu();
            spin_cpu(t->spin[2]);
        }
    }
    t->marks[6] = own_cpu();
    finish_and_park(t);
    return NULL;
}

JNIEXPORT jboolean JNICALL Java_compat_ProcessCpu_startThread(JNIEnv *env, jclass cls, jint slot,
                                                              jboolean attach, jlong before,
                                                              jlong java, jlong attached_native,
                                                              jlong after, jlong exit_after_ms) {
    if (slot < 0 || slot >= SLOTS) return JNI_FALSE;
    if (c_vm == NULL) {
        (*env)->GetJavaVM(env, &c_vm);
        c_process_cpu = (*env)->NewGlobalRef(env, cls);
    }
    struct c_thread *t = &c_threads[slot];
    memset(t, 0, sizeof *t);
    t->spin[0] = before;
    t->spin[1] = attached_native;
    t->spin[2] = after;
    t->java_nanos = java;
    t->attach = attach;
    t->exit_after_ms = exit_after_ms;
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&thread, &attr, c_thread_main, t);
    pthread_attr_destroy(&attr);
    return rc == 0 ? JNI_TRUE : JNI_FALSE;
}

/* Waits until the thread in `slot` has done its work; returns {tid, marks[0..6]}. */
JNIEXPORT jlongArray JNICALL Java_compat_ProcessCpu_awaitThread(JNIEnv *env, jclass cls, jint slot) {
    (void)cls;
    if (slot < 0 || slot >= SLOTS) return NULL;
    struct c_thread *t = &c_threads[slot];
    pthread_mutex_lock(&c_lock);
    while (!t->done) pthread_cond_wait(&c_cond, &c_lock);
    pthread_mutex_unlock(&c_lock);
    jlong values[8];
    values[0] = t->tid;
    for (int i = 0; i < 7; i++) values[i + 1] = t->marks[i];
    jlongArray out = (*env)->NewLongArray(env, 8);
    if (out != NULL) (*env)->SetLongArrayRegion(env, out, 0, 8, values);
    return out;
}

/* Short-lived native threads (issue 24): `count` pthreads, `parallel` at a time, each spinning
 * `nanos` of CPU and ending at once. Each thread measures its whole run on its own CPU clock, from
 * its first to its last statement; the sum comes back to Java. None of them ever attaches. */
struct short_thread {
    long long nanos;
    long long own;
    int tid;
};

static void *short_thread_main(void *arg) {
    struct short_thread *t = arg;
    long long start = own_cpu();
    t->tid = (int)syscall(SYS_gettid);
    spin_cpu(t->nanos);
    t->own = own_cpu() - start;
    return NULL;
}

JNIEXPORT jlong JNICALL Java_compat_ProcessCpu_shortThreads(JNIEnv *env, jclass cls, jint count,
                                                            jlong nanos, jint parallel) {
    (void)env; (void)cls;
    if (parallel < 1 || parallel > 64) return -1;
    struct short_thread threads[64];
    pthread_t ids[64];
    long long sum = 0;
    for (int done = 0; done < count; done += parallel) {
        int n = count - done < parallel ? count - done : parallel;
        for (int i = 0; i < n; i++) {
            threads[i].nanos = nanos;
            threads[i].own = 0;
            if (pthread_create(&ids[i], NULL, short_thread_main, &threads[i]) != 0) return -1;
        }
        for (int i = 0; i < n; i++) {
            pthread_join(ids[i], NULL);
            sum += threads[i].own;
        }
    }
    return sum;
}

/* One native thread that spins `nanos` and ends at once; returns {tid, its own CPU measure}. */
JNIEXPORT jlongArray JNICALL Java_compat_ProcessCpu_spinnerThread(JNIEnv *env, jclass cls,
                                                                  jlong nanos) {
    (void)cls;
    struct short_thread t = {nanos, 0, 0};
    pthread_t id;
    if (pthread_create(&id, NULL, short_thread_main, &t) != 0) return NULL;
    pthread_join(id, NULL);
    jlong values[2] = {t.tid, t.own};
    jlongArray out = (*env)->NewLongArray(env, 2);
    if (out != NULL) (*env)->SetLongArrayRegion(env, out, 0, 2, values);
    return out;
}
