/* JNI library of the nativeacct demo: a checksum in C that reports progress back to Java. */
#include <jni.h>

JNIEXPORT jlong JNICALL Java_Demo_nativeChecksum(JNIEnv *env, jclass cls, jbyteArray array, jint rounds) {
    jmethodID progress = (*env)->GetStaticMethodID(env, cls, "progress", "(I)V");
    jsize len = (*env)->GetArrayLength(env, array);
    jbyte *data = (*env)->GetByteArrayElements(env, array, NULL);
    unsigned long a = 1, b = 0;
    for (jint r = 0; r < rounds; r++) {
        for (jsize i = 0; i < len; i++) {
            a = (a + (unsigned char)data[i]) % 65521;
            b = (b + a) % 65521;
            if ((i & 0xffff) == 0xffff) (*env)->CallStaticVoidMethod(env, cls, progress, (jint)i);
        }
    }
    (*env)->ReleaseByteArrayElements(env, array, data, JNI_ABORT);
    return (jlong)((b << 16) | a);
}
