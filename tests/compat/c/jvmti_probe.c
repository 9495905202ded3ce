/* Minimal JVMTI probe: proves a runtime image accepts -agentpath and grants the capabilities that
 * nativeacct needs (early + all class hooks, native-method prefix). Reports on stderr only. */
#include <jvmti.h>
#include <stdio.h>
#include <string.h>

static volatile long classes_seen;

static void JNICALL on_class_file_load(jvmtiEnv *jvmti, JNIEnv *jni, jclass being_redefined,
                                       jobject loader, const char *name, jobject protection_domain,
                                       jint data_len, const unsigned char *data, jint *new_data_len,
                                       unsigned char **new_data) {
    (void)jvmti; (void)jni; (void)being_redefined; (void)loader; (void)name;
    (void)protection_domain; (void)data_len; (void)data; (void)new_data_len; (void)new_data;
    __atomic_add_fetch(&classes_seen, 1, __ATOMIC_RELAXED);
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni) {
    (void)jvmti; (void)jni;
    fprintf(stderr, "jvmti-probe: ok classes_seen=%ld\n", classes_seen);
}

static int fail(const char *what, jvmtiError err) {
    fprintf(stderr, "jvmti-probe: FAILED %s (jvmtiError %d)\n", what, (int)err);
    return 1;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
    (void)options; (void)reserved;
    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || jvmti == NULL) {
        fprintf(stderr, "jvmti-probe: FAILED GetEnv(JVMTI_VERSION_1_2)\n");
        return 1;
    }
    jvmtiCapabilities wanted;
    memset(&wanted, 0, sizeof wanted);
    wanted.can_generate_all_class_hook_events = 1;
    wanted.can_generate_early_class_hook_events = 1;
    wanted.can_set_native_method_prefix = 1;
    jvmtiError err = (*jvmti)->AddCapabilities(jvmti, &wanted);
    if (err != JVMTI_ERROR_NONE) return fail("AddCapabilities", err);
    err = (*jvmti)->SetNativeMethodPrefix(jvmti, "$$probe$$");
    if (err != JVMTI_ERROR_NONE) return fail("SetNativeMethodPrefix", err);
    jvmtiEventCallbacks callbacks;
    memset(&callbacks, 0, sizeof callbacks);
    callbacks.ClassFileLoadHook = on_class_file_load;
    callbacks.VMDeath = on_vm_death;
    err = (*jvmti)->SetEventCallbacks(jvmti, &callbacks, sizeof callbacks);
    if (err != JVMTI_ERROR_NONE) return fail("SetEventCallbacks", err);
    err = (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, NULL);
    if (err != JVMTI_ERROR_NONE) return fail("enable ClassFileLoadHook", err);
    err = (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
    if (err != JVMTI_ERROR_NONE) return fail("enable VMDeath", err);
    return 0;
}
