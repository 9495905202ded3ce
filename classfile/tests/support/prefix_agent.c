/* Minimal JVMTI agent for the tests: announces the native-method prefix that the offline
 * rewriter gave to renamed natives (-agentpath:libprefix_agent.so=<prefix>), so the VM still
 * finds their JNI implementations. Nothing else. */
#include <jvmti.h>
#include <stdio.h>
#include <string.h>

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
    (void)reserved;
    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || jvmti == NULL) {
        fprintf(stderr, "prefix_agent: no JVMTI\n");
        return JNI_ERR;
    }
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_set_native_method_prefix = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
        fprintf(stderr, "prefix_agent: cannot add can_set_native_method_prefix\n");
        return JNI_ERR;
    }
    const char *prefix = (options != NULL && options[0] != '\0') ? options : "$nativeacct$";
    if ((*jvmti)->SetNativeMethodPrefix(jvmti, prefix) != JVMTI_ERROR_NONE) {
        fprintf(stderr, "prefix_agent: SetNativeMethodPrefix failed\n");
        return JNI_ERR;
    }
    return JNI_OK;
}
