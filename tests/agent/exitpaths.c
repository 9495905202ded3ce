/* JNI library of ExitPaths.java. */
#include <jni.h>
#include <stdlib.h>

static volatile int spinning;
static volatile unsigned long sink;

JNIEXPORT void JNICALL Java_ExitPaths_tick(JNIEnv *env, jclass cls) { sink++; }

static volatile int descend_entries;

JNIEXPORT jint JNICALL Java_ExitPaths_descend(JNIEnv *env, jclass cls, jint depth) {
    descend_entries++;
    jmethodID m = (*env)->GetStaticMethodID(env, cls, "recurse", "(I)I");
    if (m == NULL) return -1;
    /* Returns with the StackOverflowError pending once Java runs out of stack. */
    return (*env)->CallStaticIntMethod(env, cls, m, depth);
}

JNIEXPORT jint JNICALL Java_ExitPaths_descendEntries(JNIEnv *env, jclass cls) { return descend_entries; }

JNIEXPORT void JNICALL Java_ExitPaths_exitFromNative(JNIEnv *env, jclass cls, jint code) { exit(code); }

JNIEXPORT void JNICALL Java_ExitPaths_spinInNative(JNIEnv *env, jclass cls) {
    unsigned long x = 1;
    spinning = 1;
    for (;;) {
        for (int i = 0; i < 1000; i++) x = x * 6364136223846793005UL + 1;
        sink = x;
    }
}

JNIEXPORT jboolean JNICALL Java_ExitPaths_spinning(JNIEnv *env, jclass cls) { return spinning ? JNI_TRUE : JNI_FALSE; }
