/*
 * Test-only fake JNI originals, linked into the integration tests alone (see build.rs).
 *
 * The method ID a test passes is a NUL-terminated string of JNI type letters (Z B C S I J F D L), one
 * per Java argument; NULL means no arguments. Each fake decodes the arguments by that string (from
 * `...`, a va_list or a jvalue array, exactly as a JVM would), records everything it received in a
 * thread-local record, tells the test's observer its own name, and returns the thread-local value the
 * test set beforehand.
 *
 * fake_invoke_<Name>V(entry, env, receivers..., method, ...) calls a V entry with a real va_list.
 */
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

typedef union fake_jvalue {
    uint8_t z;
    int8_t b;
    uint16_t c;
    int16_t s;
    int32_t i;
    int64_t j;
    float f;
    double d;
    void *l;
} fake_jvalue;

#define FAKE_MAX_ARGS 64

struct fake_call_record {
    const char *original; /* name of the fake that ran */
    void *env;
    void *first_receiver;  /* obj, or clazz for static/NewObject */
    void *second_receiver; /* clazz for nonvirtual, else NULL */
    void *method;
    const void *array_args; /* the jvalue pointer an A fake received, else NULL */
    int32_t arg_count;
    char arg_types[FAKE_MAX_ARGS];
    fake_jvalue args[FAKE_MAX_ARGS];
};

static _Thread_local struct fake_call_record last_call;
static _Thread_local fake_jvalue next_return;
static void (*observer)(const char *original);

void fake_set_observer(void (*callback)(const char *original)) { observer = callback; }
void fake_set_next_return(const fake_jvalue *value) { next_return = *value; }
const struct fake_call_record *fake_last_call(void) { return &last_call; }
void fake_clear_last_call(void) { memset(&last_call, 0, sizeof last_call); }

static void begin_record(const char *original, void *env, void *first, void *second,
                         void *method) {
    memset(&last_call, 0, sizeof last_call);
    last_call.original = original;
    last_call.env = env;
    last_call.first_receiver = first;
    last_call.second_receiver = second;
    last_call.method = method;
}

static void record_va_list(const char *types, va_list args) {
    for (; types != NULL && *types != '\0' && last_call.arg_count < FAKE_MAX_ARGS; ++types) {
        fake_jvalue value;
        memset(&value, 0, sizeof value);
        switch (*types) {
        case 'Z': value.z = (uint8_t)va_arg(args, int); break;
        case 'B': value.b = (int8_t)va_arg(args, int); break;
        case 'C': value.c = (uint16_t)va_arg(args, int); break;
        case 'S': value.s = (int16_t)va_arg(args, int); break;
        case 'I': value.i = va_arg(args, int32_t); break;
        case 'J': value.j = va_arg(args, int64_t); break;
        case 'F': value.f = (float)va_arg(args, double); break;
        case 'D': value.d = va_arg(args, double); break;
        case 'L': value.l = va_arg(args, void *); break;
        default: return; /* unknown letter: stop, the test sees a short count */
        }
        last_call.arg_types[last_call.arg_count] = *types;
        last_call.args[last_call.arg_count++] = value;
    }
}

static void record_array(const char *types, const fake_jvalue *args) {
    last_call.array_args = args;
    for (; types != NULL && *types != '\0' && last_call.arg_count < FAKE_MAX_ARGS; ++types) {
        const fake_jvalue *source = &args[last_call.arg_count];
        fake_jvalue value;
        memset(&value, 0, sizeof value);
        switch (*types) {
        case 'Z': value.z = source->z; break;
        case 'B': value.b = source->b; break;
        case 'C': value.c = source->c; break;
        case 'S': value.s = source->s; break;
        case 'I': value.i = source->i; break;
        case 'J': value.j = source->j; break;
        case 'F': value.f = source->f; break;
        case 'D': value.d = source->d; break;
        case 'L': value.l = source->l; break;
        default: return;
        }
        last_call.arg_types[last_call.arg_count] = *types;
        last_call.args[last_call.arg_count++] = value;
    }
}

static void notify(void) {
    if (observer != NULL) observer(last_call.original);
}

/* Receivers between env and method: parameters, arguments, and the two recorded receivers. */
#define PARAMS_OBJ void *obj
#define ARGS_OBJ obj
#define RECORDED_OBJ obj, NULL
#define PARAMS_OBJ_CLASS void *obj, void *clazz
#define ARGS_OBJ_CLASS obj, clazz
#define RECORDED_OBJ_CLASS obj, clazz
#define PARAMS_CLASS void *clazz
#define ARGS_CLASS clazz
#define RECORDED_CLASS clazz, NULL

/* The ten families of one kind (Call<KIND><Type>Method), with each return type's jvalue field. */
#define FAKE_FAMILIES_OF_KIND(VALUE, VOID, KIND, receiver)         \
    VALUE(Call##KIND##ObjectMethod, void *, l, receiver)           \
    VALUE(Call##KIND##BooleanMethod, uint8_t, z, receiver)         \
    VALUE(Call##KIND##ByteMethod, int8_t, b, receiver)             \
    VALUE(Call##KIND##CharMethod, uint16_t, c, receiver)           \
    VALUE(Call##KIND##ShortMethod, int16_t, s, receiver)           \
    VALUE(Call##KIND##IntMethod, int32_t, i, receiver)             \
    VALUE(Call##KIND##LongMethod, int64_t, j, receiver)            \
    VALUE(Call##KIND##FloatMethod, float, f, receiver)             \
    VALUE(Call##KIND##DoubleMethod, double, d, receiver)           \
    VOID(Call##KIND##VoidMethod, receiver)

#define FAKE_FAMILIES(VALUE, VOID)                                 \
    FAKE_FAMILIES_OF_KIND(VALUE, VOID, , OBJ)                      \
    FAKE_FAMILIES_OF_KIND(VALUE, VOID, Nonvirtual, OBJ_CLASS)      \
    FAKE_FAMILIES_OF_KIND(VALUE, VOID, Static, CLASS)              \
    VALUE(NewObject, void *, l, CLASS)

/* RESULT(ret, field) is the statement that ends a fake: `return next_return.field;` or nothing. */
#define RETURN_VALUE(field) return next_return.field;
#define RETURN_NOTHING(field)

#define DEFINE_FAKES(name, ret, field, receiver, finish)                                        \
    ret fake_##name(void *env, PARAMS_##receiver, void *method, ...) {                          \
        va_list args;                                                                           \
        begin_record(#name, env, RECORDED_##receiver, method);                                  \
        va_start(args, method);                                                                 \
        record_va_list((const char *)method, args);                                             \
        va_end(args);                                                                           \
        notify();                                                                               \
        finish(field)                                                                           \
    }                                                                                           \
    ret fake_##name##V(void *env, PARAMS_##receiver, void *method, va_list args) {              \
        begin_record(#name "V", env, RECORDED_##receiver, method);                              \
        record_va_list((const char *)method, args);                                             \
        notify();                                                                               \
        finish(field)                                                                           \
    }                                                                                           \
    ret fake_##name##A(void *env, PARAMS_##receiver, void *method, const fake_jvalue *args) {   \
        begin_record(#name "A", env, RECORDED_##receiver, method);                              \
        record_array((const char *)method, args);                                               \
        notify();                                                                               \
        finish(field)                                                                           \
    }

#define DEFINE_VALUE_FAKES(name, ret, field, receiver)                                          \
    DEFINE_FAKES(name, ret, field, receiver, RETURN_VALUE)                                      \
    ret fake_invoke_##name##V(ret (*entry)(void *, PARAMS_##receiver, void *, va_list),         \
                              void *env, PARAMS_##receiver, void *method, ...) {                \
        va_list args;                                                                           \
        va_start(args, method);                                                                 \
        ret result = entry(env, ARGS_##receiver, method, args);                                 \
        va_end(args);                                                                           \
        return result;                                                                          \
    }

#define DEFINE_VOID_FAKES(name, receiver)                                                       \
    DEFINE_FAKES(name, void, none, receiver, RETURN_NOTHING)                                    \
    void fake_invoke_##name##V(void (*entry)(void *, PARAMS_##receiver, void *, va_list),       \
                               void *env, PARAMS_##receiver, void *method, ...) {               \
        va_list args;                                                                           \
        va_start(args, method);                                                                 \
        entry(env, ARGS_##receiver, method, args);                                              \
        va_end(args);                                                                           \
    }

FAKE_FAMILIES(DEFINE_VALUE_FAKES, DEFINE_VOID_FAKES)
