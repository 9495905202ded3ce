/*
 * The 31 C-variadic JNI entry points (Call<Type>Method, CallNonvirtual<Type>Method,
 * CallStatic<Type>Method, NewObject).
 *
 * Stable Rust cannot define a C-variadic function, so each entry here only packs its `...` into a
 * va_list and hands it to the Rust function `nativeacct_jni_<Name>_va`, which fires the hooks for
 * <Name> and calls the JVM's original `<Name>V`. No logic lives here.
 *
 * Everything here is hidden, including the declarations of the Rust functions: ELF keeps the most
 * restrictive visibility, so neither side is exported from the agent library; calls are direct.
 *
 * No JDK headers are needed: every reference type is passed as `void *`.
 * The Rust side types va_list as a pointer-sized value (jni-sys: `*mut c_void`), which matches
 * the ABI on x86_64 SysV (va_list is an array type, so it decays to a pointer) and on aarch64 AAPCS64 Linux
 * (va_list is a 32-byte struct, which the ABI passes by reference to a copy the callee may clobber;
 * the shim never reads that copy again). Only x86_64 is tested.
 */
#include <stdarg.h>
#include <stdint.h>

#define NATIVEACCT_HIDDEN __attribute__((visibility("hidden")))

/* Receivers between `env` and `methodID`: parameters and the matching arguments. */
#define RECEIVER_PARAMS_OBJ void *obj
#define RECEIVER_ARGS_OBJ obj
#define RECEIVER_PARAMS_OBJ_CLASS void *obj, void *clazz
#define RECEIVER_ARGS_OBJ_CLASS obj, clazz
#define RECEIVER_PARAMS_CLASS void *clazz
#define RECEIVER_ARGS_CLASS clazz

/* VALUE(name, return type, receiver) for functions returning a value, VOID(name, receiver) else. */
#define NATIVEACCT_VARIADIC_FUNCTIONS(VALUE, VOID)                                                  \
    VALUE(CallObjectMethod, void *, OBJ)                                                            \
    VALUE(CallBooleanMethod, uint8_t, OBJ)                                                          \
    VALUE(CallByteMethod, int8_t, OBJ)                                                              \
    VALUE(CallCharMethod, uint16_t, OBJ)                                                            \
    VALUE(CallShortMethod, int16_t, OBJ)                                                            \
    VALUE(CallIntMethod, int32_t, OBJ)                                                              \
    VALUE(CallLongMethod, int64_t, OBJ)                                                             \
    VALUE(CallFloatMethod, float, OBJ)                                                              \
    VALUE(CallDoubleMethod, double, OBJ)                                                            \
    VOID(CallVoidMethod, OBJ)                                                                       \
    VALUE(CallNonvirtualObjectMethod, void *, OBJ_CLASS)                                            \
    VALUE(CallNonvirtualBooleanMethod, uint8_t, OBJ_CLASS)                                          \
    VALUE(CallNonvirtualByteMethod, int8_t, OBJ_CLASS)                                              \
    VALUE(CallNonvirtualCharMethod, uint16_t, OBJ_CLASS)                                            \
    VALUE(CallNonvirtualShortMethod, int16_t, OBJ_CLASS)                                            \
    VALUE(CallNonvirtualIntMethod, int32_t, OBJ_CLASS)                                              \
    VALUE(CallNonvirtualLongMethod, int64_t, OBJ_CLASS)                                             \
    VALUE(CallNonvirtualFloatMethod, float, OBJ_CLASS)                                              \
    VALUE(CallNonvirtualDoubleMethod, double, OBJ_CLASS)                                            \
    VOID(CallNonvirtualVoidMethod, OBJ_CLASS)                                                       \
    VALUE(CallStaticObjectMethod, void *, CLASS)                                                    \
    VALUE(CallStaticBooleanMethod, uint8_t, CLASS)                                                  \
    VALUE(CallStaticByteMethod, int8_t, CLASS)                                                      \
    VALUE(CallStaticCharMethod, uint16_t, CLASS)                                                    \
    VALUE(CallStaticShortMethod, int16_t, CLASS)                                                    \
    VALUE(CallStaticIntMethod, int32_t, CLASS)                                                      \
    VALUE(CallStaticLongMethod, int64_t, CLASS)                                                     \
    VALUE(CallStaticFloatMethod, float, CLASS)                                                      \
    VALUE(CallStaticDoubleMethod, double, CLASS)                                                    \
    VOID(CallStaticVoidMethod, CLASS)                                                               \
    VALUE(NewObject, void *, CLASS)

#define DEFINE_VALUE_SHIM(name, ret, receiver)                                                      \
    NATIVEACCT_HIDDEN ret nativeacct_jni_##name##_va(void *env, RECEIVER_PARAMS_##receiver,         \
                                               void *method, va_list args);                         \
    NATIVEACCT_HIDDEN ret nativeacct_jni_##name(void *env, RECEIVER_PARAMS_##receiver,              \
                                                void *method, ...);                                 \
    NATIVEACCT_HIDDEN ret nativeacct_jni_##name(void *env, RECEIVER_PARAMS_##receiver,              \
                                                void *method, ...) {                                \
        va_list args;                                                                               \
        va_start(args, method);                                                                     \
        ret result = nativeacct_jni_##name##_va(env, RECEIVER_ARGS_##receiver, method, args);       \
        va_end(args);                                                                               \
        return result;                                                                              \
    }

#define DEFINE_VOID_SHIM(name, receiver)                                                            \
    NATIVEACCT_HIDDEN void nativeacct_jni_##name##_va(void *env, RECEIVER_PARAMS_##receiver,        \
                                               void *method, va_list args);                         \
    NATIVEACCT_HIDDEN void nativeacct_jni_##name(void *env, RECEIVER_PARAMS_##receiver,             \
                                                 void *method, ...);                                \
    NATIVEACCT_HIDDEN void nativeacct_jni_##name(void *env, RECEIVER_PARAMS_##receiver,             \
                                                 void *method, ...) {                               \
        va_list args;                                                                               \
        va_start(args, method);                                                                     \
        nativeacct_jni_##name##_va(env, RECEIVER_ARGS_##receiver, method, args);                    \
        va_end(args);                                                                               \
    }

NATIVEACCT_VARIADIC_FUNCTIONS(DEFINE_VALUE_SHIM, DEFINE_VOID_SHIM)
