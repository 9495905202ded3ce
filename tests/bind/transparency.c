/* JNI side of Transparency.java. Built with frame pointers so framesToJava can walk them. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <jni.h>
#include <stdint.h>

JNIEXPORT void JNICALL Java_Transparency_callBack(JNIEnv *env, jclass cls, jobject runnable) {
    (void)cls;
    jclass type = (*env)->GetObjectClass(env, runnable);
    jmethodID run = (*env)->GetMethodID(env, type, "run", "()V");
    (*env)->CallVoidMethod(env, runnable, run);
}

JNIEXPORT void JNICALL Java_Transparency_throwFromNative(JNIEnv *env, jclass cls, jstring message) {
    (void)cls;
    const char *text = (*env)->GetStringUTFChars(env, message, NULL);
    jclass ise = (*env)->FindClass(env, "java/lang/IllegalStateException");
    (*env)->ThrowNew(env, ise, text);
    (*env)->ReleaseStringUTFChars(env, message, text);
}

JNIEXPORT jdouble JNICALL Java_Transparency_mixed20(JNIEnv *env, jclass cls, jint a, jlong b, jfloat c,
        jdouble d, jobject e, jint f, jlong g, jfloat h, jdouble i, jstring j, jint k, jlong l, jfloat m,
        jdouble n, jbyte o, jshort p, jchar q, jboolean r, jfloat s, jdouble t) {
    (void)cls;
    double values[20] = {a, (double)b, c, d, e == NULL ? 0 : 1, f, (double)g, h, i,
                         (double)(*env)->GetStringLength(env, j), k, (double)l, m, n, o, p, q,
                         r ? 1 : 0, s, t};
    double sum = 0;
    for (int idx = 0; idx < 20; idx++) {
        sum += (idx + 1) * values[idx];
    }
    return sum;
}

JNIEXPORT jfloat JNICALL Java_Transparency_instanceFloat(JNIEnv *env, jobject self, jfloat x, jdouble y) {
    (void)env;
    (void)self;
    return x * (float)y + 0.125f;
}

JNIEXPORT jobject JNICALL Java_Transparency_identity(JNIEnv *env, jclass cls, jobject o) {
    (void)env;
    (void)cls;
    return o;
}

JNIEXPORT jboolean JNICALL Java_Transparency_not(JNIEnv *env, jclass cls, jboolean b) {
    (void)env;
    (void)cls;
    return !b;
}

JNIEXPORT jint JNICALL Java_Transparency_add(JNIEnv *env, jclass cls, jint a, jint b) {
    (void)env;
    (void)cls;
    return a + b;
}

/* Walk the frame-pointer chain the way async-profiler does from a native frame: stop at the first
 * return address that lies in no loaded library, i.e. in the VM's code cache (Java frames). Depth 0
 * is the return into frames_to_java / library_at, depth 1 the return into the JNI function, depth 2
 * the return into whatever called the JNI function. Built with -fno-omit-frame-pointer and
 * -fno-optimize-sibling-calls so that every one of these functions keeps its frame. */
__attribute__((noinline)) static void *return_address_at(int depth, int *found) {
    void **fp = __builtin_frame_address(0);
    *found = 0;
    for (int d = 0; fp != NULL && d < 64; d++) {
        void *ret = fp[1];
        if (d == depth) {
            *found = 1;
            return ret;
        }
        void **next = (void **)fp[0];
        if ((uintptr_t)next <= (uintptr_t)fp) {
            return NULL;
        }
        fp = next;
    }
    return NULL;
}

__attribute__((noinline)) static int frames_to_java(void) {
    for (int depth = 0; depth < 64; depth++) {
        int found;
        void *ret = return_address_at(depth, &found);
        if (!found) {
            return -1;
        }
        Dl_info info;
        if (dladdr(ret, &info) == 0 || info.dli_fname == NULL) {
            return depth;
        }
    }
    return -1;
}

JNIEXPORT jint JNICALL Java_Transparency_framesToJava(JNIEnv *env, jclass cls) {
    (void)env;
    (void)cls;
    return frames_to_java();
}

__attribute__((noinline)) static const char *library_at(int depth) {
    int found;
    void *ret = return_address_at(depth, &found);
    Dl_info info;
    if (!found || dladdr(ret, &info) == 0 || info.dli_fname == NULL) {
        return "";
    }
    const char *name = info.dli_fname;
    for (const char *p = name; *p; p++) {
        if (*p == '/') {
            name = p + 1;
        }
    }
    return name;
}

JNIEXPORT jstring JNICALL Java_Transparency_libraryAt(JNIEnv *env, jclass cls, jint depth) {
    (void)cls;
    return (*env)->NewStringUTF(env, library_at(depth));
}

/* One C function behind two Java natives, and a native whose binding changes while it runs. */
static jint shared_impl(JNIEnv *env, jclass cls, jint x) {
    (void)env;
    (void)cls;
    return x * 10;
}

static jint first_target(JNIEnv *env, jclass cls, jint x) {
    (void)env;
    (void)cls;
    (void)x;
    return 1;
}

static jint second_target(JNIEnv *env, jclass cls, jint x) {
    (void)env;
    (void)cls;
    (void)x;
    return 2;
}

JNIEXPORT void JNICALL Java_Transparency_registerShared(JNIEnv *env, jclass cls) {
    JNINativeMethod methods[] = {
        {"sharedA", "(I)I", (void *)shared_impl},
        {"sharedB", "(I)I", (void *)shared_impl},
        {"rebound", "(I)I", (void *)first_target},
    };
    (*env)->RegisterNatives(env, cls, methods, 3);
}

JNIEXPORT void JNICALL Java_Transparency_rebind(JNIEnv *env, jclass cls) {
    JNINativeMethod methods[] = {{"rebound", "(I)I", (void *)second_target}};
    (*env)->RegisterNatives(env, cls, methods, 1);
}
