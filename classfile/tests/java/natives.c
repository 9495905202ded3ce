/* JNI implementations of the test natives (Natives, OldNatives) and of the injected gate helpers. */
#include <jni.h>
#include <stdio.h>
#include <stdlib.h>

static long gate_begins, gate_ends;

JNIEXPORT void JNICALL Java_Gate_j2n_00024beginN(JNIEnv *env, jclass cls, jint id) {
    (void)env; (void)cls; (void)id;
    __atomic_add_fetch(&gate_begins, 1, __ATOMIC_SEQ_CST);
}
JNIEXPORT void JNICALL Java_Gate_j2n_00024endN(JNIEnv *env, jclass cls, jint id) {
    (void)env; (void)cls; (void)id;
    __atomic_add_fetch(&gate_ends, 1, __ATOMIC_SEQ_CST);
}
JNIEXPORT jlong JNICALL Java_GateProbe_begins(JNIEnv *env, jclass cls) {
    (void)env; (void)cls;
    return __atomic_load_n(&gate_begins, __ATOMIC_SEQ_CST);
}
JNIEXPORT jlong JNICALL Java_GateProbe_ends(JNIEnv *env, jclass cls) {
    (void)env; (void)cls;
    return __atomic_load_n(&gate_ends, __ATOMIC_SEQ_CST);
}

JNIEXPORT jint JNICALL Java_Natives_add(JNIEnv *env, jclass cls, jint a, jint b) {
    (void)env; (void)cls;
    return a + b;
}
static jint base_of(JNIEnv *env, jobject self) {
    jclass cls = (*env)->GetObjectClass(env, self);
    jfieldID field = (*env)->GetFieldID(env, cls, "base", "I");
    return (*env)->GetIntField(env, self, field);
}
JNIEXPORT jlong JNICALL Java_Natives_scale(JNIEnv *env, jobject self, jlong x, jint k) {
    return x * k + base_of(env, self);
}
JNIEXPORT jdouble JNICALL Java_Natives_mix(JNIEnv *env, jclass cls, jdouble d, jfloat f, jlong l, jint i) {
    (void)env; (void)cls;
    return d * 2 + f + (jdouble)l + i;
}
JNIEXPORT jint JNICALL Java_Natives_packSmall(JNIEnv *env, jclass cls, jbyte b, jchar c, jshort s, jboolean z) {
    (void)env; (void)cls;
    return b * 100000 + c * 100 + s + (z ? 7 : 0);
}
JNIEXPORT jstring JNICALL Java_Natives_join(JNIEnv *env, jclass cls, jstring a, jstring b) {
    (void)cls;
    const char *x = (*env)->GetStringUTFChars(env, a, NULL);
    const char *y = (*env)->GetStringUTFChars(env, b, NULL);
    char buf[256];
    snprintf(buf, sizeof buf, "%s+%s", x, y);
    (*env)->ReleaseStringUTFChars(env, a, x);
    (*env)->ReleaseStringUTFChars(env, b, y);
    return (*env)->NewStringUTF(env, buf);
}
JNIEXPORT jintArray JNICALL Java_Natives_reversed(JNIEnv *env, jclass cls, jintArray xs) {
    (void)cls;
    jsize n = (*env)->GetArrayLength(env, xs);
    jint *src = (*env)->GetIntArrayElements(env, xs, NULL);
    jint *tmp = malloc(sizeof(jint) * (n + 1));
    for (jsize i = 0; i < n; i++) tmp[i] = src[n - 1 - i];
    (*env)->ReleaseIntArrayElements(env, xs, src, JNI_ABORT);
    jintArray out = (*env)->NewIntArray(env, n);
    (*env)->SetIntArrayRegion(env, out, 0, n, tmp);
    free(tmp);
    return out;
}
JNIEXPORT jlong JNICALL Java_Natives_sum(JNIEnv *env, jclass cls, jlongArray xs) {
    (void)cls;
    jsize n = (*env)->GetArrayLength(env, xs);
    jlong total = 0;
    jlong *v = (*env)->GetLongArrayElements(env, xs, NULL);
    for (jsize i = 0; i < n; i++) total += v[i];
    (*env)->ReleaseLongArrayElements(env, xs, v, JNI_ABORT);
    return total;
}
JNIEXPORT jint JNICALL Java_Natives_lockedIncrement(JNIEnv *env, jobject self) {
    jclass cls = (*env)->GetObjectClass(env, self);
    jmethodID holds = (*env)->GetMethodID(env, cls, "holdsLock", "()Z");
    return (*env)->CallBooleanMethod(env, self, holds) ? 1 : 0;
}
JNIEXPORT void JNICALL Java_Natives_fail(JNIEnv *env, jclass cls, jstring message) {
    (void)cls;
    if (message == NULL) {
        (*env)->ThrowNew(env, (*env)->FindClass(env, "java/lang/NullPointerException"), "message");
        return;
    }
    const char *m = (*env)->GetStringUTFChars(env, message, NULL);
    (*env)->ThrowNew(env, (*env)->FindClass(env, "java/io/IOException"), m);
    (*env)->ReleaseStringUTFChars(env, message, m);
}
JNIEXPORT jint JNICALL Java_Natives_callback(JNIEnv *env, jclass cls, jint n) {
    jmethodID up = (*env)->GetStaticMethodID(env, cls, "up", "(I)I");
    return (*env)->CallStaticIntMethod(env, cls, up, n) + 1;
}
JNIEXPORT void JNICALL Java_Natives_nothing(JNIEnv *env, jclass cls) {
    (void)env; (void)cls;
}
JNIEXPORT jobject JNICALL Java_Natives_identity(JNIEnv *env, jclass cls, jobject o) {
    (void)env; (void)cls;
    return o;
}
JNIEXPORT jfloat JNICALL Java_Natives_half(JNIEnv *env, jclass cls, jfloat f) {
    (void)env; (void)cls;
    return f / 2;
}
JNIEXPORT jchar JNICALL Java_Natives_upper(JNIEnv *env, jclass cls, jchar c) {
    (void)env; (void)cls;
    return (c >= 'a' && c <= 'z') ? (jchar)(c - 32) : c;
}
JNIEXPORT jshort JNICALL Java_Natives_neg(JNIEnv *env, jclass cls, jshort s) {
    (void)env; (void)cls;
    return (jshort)-s;
}
JNIEXPORT jbyte JNICALL Java_Natives_inc(JNIEnv *env, jclass cls, jbyte b) {
    (void)env; (void)cls;
    return (jbyte)(b + 1);
}
JNIEXPORT jboolean JNICALL Java_Natives_flip(JNIEnv *env, jclass cls, jboolean z) {
    (void)env; (void)cls;
    return z ? JNI_FALSE : JNI_TRUE;
}
JNIEXPORT jobjectArray JNICALL Java_Natives_grid(JNIEnv *env, jclass cls, jint n) {
    (void)cls;
    jobjectArray rows = (*env)->NewObjectArray(env, n, (*env)->FindClass(env, "[D"), NULL);
    for (jint i = 0; i < n; i++) {
        jdoubleArray row = (*env)->NewDoubleArray(env, n);
        for (jint j = 0; j < n; j++) {
            jdouble v = i * 10 + j;
            (*env)->SetDoubleArrayRegion(env, row, j, 1, &v);
        }
        (*env)->SetObjectArrayElement(env, rows, i, row);
    }
    return rows;
}

JNIEXPORT jint JNICALL Java_OldNatives_twice(JNIEnv *env, jclass cls, jint x) {
    (void)env; (void)cls;
    return 2 * x;
}
JNIEXPORT jlong JNICALL Java_OldNatives_plus(JNIEnv *env, jobject self, jlong x) {
    jclass cls = (*env)->GetObjectClass(env, self);
    jfieldID field = (*env)->GetFieldID(env, cls, "base", "J");
    return x + (*env)->GetLongField(env, self, field);
}
/*WIDE*/
