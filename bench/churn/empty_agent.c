/* The floor of bench-churn: a JVMTI agent that does nothing. Loaded bare, it shows what the mere
 * presence of a JVMTI environment costs each thread. Its options (any of, in one word) enable
 * events with empty callbacks: "start" ThreadStart, "end" ThreadEnd, "events" both (the least any
 * per-thread agent asks of HotSpot), "bind" NativeMethodBind with its capability (nativeacct's
 * j2n=bind asks for it too). Built by scripts/bench-churn. */
#include <jvmti.h>
#include <string.h>

static void JNICALL thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread) {}
static void JNICALL thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread) {}
static void JNICALL native_bind(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method,
                                void *address, void **new_address) {}

static int has(const char *options, const char *word) {
  return options != NULL && strstr(options, word) != NULL;
}

static int enable(jvmtiEnv *jvmti, jvmtiEvent event) {
  return (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, event, NULL) == JVMTI_ERROR_NONE;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
  jvmtiEnv *jvmti = NULL;
  if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) return JNI_ERR;
  int start = has(options, "start") || has(options, "events");
  int end = has(options, "end") || has(options, "events");
  int bind = has(options, "bind");
  if (bind) {
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_generate_native_method_bind_events = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) return JNI_ERR;
  }
  jvmtiEventCallbacks callbacks;
  memset(&callbacks, 0, sizeof callbacks);
  callbacks.ThreadStart = thread_start;
  callbacks.ThreadEnd = thread_end;
  callbacks.NativeMethodBind = native_bind;
  if ((*jvmti)->SetEventCallbacks(jvmti, &callbacks, sizeof callbacks) != JVMTI_ERROR_NONE) return JNI_ERR;
  if ((start && !enable(jvmti, JVMTI_EVENT_THREAD_START)) || (end && !enable(jvmti, JVMTI_EVENT_THREAD_END)) ||
      (bind && !enable(jvmti, JVMTI_EVENT_NATIVE_METHOD_BIND)))
    return JNI_ERR;
  return JNI_OK;
}
