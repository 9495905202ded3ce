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
 * the ABI of both supported targets when a va_list is passed as an argument:
 * - x86_64 System V: va_list is an array of one 24-byte struct, so it decays to a pointer to it;
 * - aarch64 AAPCS64 (Linux): va_list is a 32-byte struct (stack, gr_top, vr_top, gr_offs, vr_offs);
 *   a composite larger than 16 bytes is passed as a pointer to a copy the caller makes, which the
 *   callee owns and may consume.
 * Either way the Rust function receives one pointer and hands it, unread, to the JVM's `<Name>V`,
 * which consumes it; neither side reads it afterwards. tests/arm64_emulated.rs runs all 93 call
 * styles with 12 mixed arguments on arm64 under qemu.
 */
#include <stdarg.h>
#include <stdint.h>

_Static_assert(sizeof(va_list) == 24 || sizeof(va_list) == 32,
               "a va_list layout this shim has not been checked against");

#define NATIVEACCT_HIDDEN __attribute__((visibility("hidden")))

/* Receivers between `env` and `methodID`: parameters and the matching arguments. */
#define RECEIVER_PARAMS_OBJ void *obj
#define RECEIVER_ARGS_OBJ obj
#define RECEIVER_PARAMS_OBJ_CLASS void *obj, void *clazz
#define RECEIVER_ARGS_OBJ_CLASS obj, clazz
#define RECEIVER_PARAMS_CLASS void *clazz
#define RECEIVER_ARGS_CLASS clazz

/* The ten families of one kind: Call<KIND><Type>Method for each return type, in JNI table order.
 * VALUE(name, return type, receiver) for functions returning a value, VOID(name, receiver) else. */
#define NATIVEACCT_FAMILIES_OF_KIND(VALUE, VOID, KIND, receiver)                                   \
    VALUE(Call##KIND##ObjectMethod, void *, receiver)                                               \
    VALUE(Call##KIND##BooleanMethod, uint8_t, receiver)                                             \
    VALUE(Call##KIND##ByteMethod, int8_t, receiver)                                                 \
    VALUE(Call##KIND##CharMethod, uint16_t, receiver)                                               \
    VALUE(Call##KIND##ShortMethod, int16_t, receiver)                                               \
    VALUE(Call##KIND##IntMethod, int32_t, receiver)                                                 \
    VALUE(Call##KIND##LongMethod, int64_t, receiver)                                                \
    VALUE(Call##KIND##FloatMethod, float, receiver)                                                 \
    VALUE(Call##KIND##DoubleMethod, double, receiver)                                               \
    VOID(Call##KIND##VoidMethod, receiver)

/* Virtual (no KIND), nonvirtual and static families, then NewObject. */
#define NATIVEACCT_VARIADIC_FUNCTIONS(VALUE, VOID)                                                  \
    NATIVEACCT_FAMILIES_OF_KIND(VALUE, VOID, , OBJ)                                                 \
    NATIVEACCT_FAMILIES_OF_KIND(VALUE, VOID, Nonvirtual, OBJ_CLASS)                                 \
    NATIVEACCT_FAMILIES_OF_KIND(VALUE, VOID, Static, CLASS)                                         \
    VALUE(NewObject, void *, CLASS)

/* The Rust function's declaration, then the variadic entry's, up to its body. */
#define DECLARE_SHIM(name, ret, receiver)                                                           \
    NATIVEACCT_HIDDEN ret nativeacct_jni_##name##_va(void *env, RECEIVER_PARAMS_##receiver,         \
                                               void *method, va_list args);                         \
    NATIVEACCT_HIDDEN ret nativeacct_jni_##name(void *env, RECEIVER_PARAMS_##receiver,              \
                                                void *method, ...);                                 \
    NATIVEACCT_HIDDEN ret nativeacct_jni_##name(void *env, RECEIVER_PARAMS_##receiver,              \
                                                void *method, ...)

#define DEFINE_VALUE_SHIM(name, ret, receiver)                                                      \
    DECLARE_SHIM(name, ret, receiver) {                                                             \
        va_list args;                                                                               \
        va_start(args, method);                                                                     \
        ret result = nativeacct_jni_##name##_va(env, RECEIVER_ARGS_##receiver, method, args);       \
        va_end(args);                                                                               \
        return result;                                                                              \
    }

/* C has no `return f();` for void functions, hence a second body. */
#define DEFINE_VOID_SHIM(name, receiver)                                                            \
    DECLARE_SHIM(name, void, receiver) {                                                            \
        va_list args;                                                                               \
        va_start(args, method);                                                                     \
        nativeacct_jni_##name##_va(env, RECEIVER_ARGS_##receiver, method, args);                    \
        va_end(args);                                                                               \
    }

NATIVEACCT_VARIADIC_FUNCTIONS(DEFINE_VALUE_SHIM, DEFINE_VOID_SHIM)
