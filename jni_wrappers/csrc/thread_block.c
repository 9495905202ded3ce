/* The calling thread's counter block for the counting-only JNI wrappers (src/counted.rs).
 *
 * Initial-exec TLS: one %fs-relative load, no __tls_get_addr, so it is as cheap as a thread-local
 * can be in a shared object and safe to read in a signal handler. The agent is loaded with dlopen,
 * where initial-exec needs a few bytes of the static TLS surplus glibc reserves for this; one
 * pointer is well within it. Hidden, not static: on x86-64 the wrappers read the word inline
 * (src/arch/x86_64.rs); elsewhere they call the reader below directly, not through the PLT
 * (src/arch/generic.rs). */

__attribute__((tls_model("initial-exec"), visibility("hidden"))) __thread const void *nativeacct_thread_block_word;

__attribute__((visibility("hidden"))) const void *nativeacct_thread_block(void) {
    return nativeacct_thread_block_word;
}

__attribute__((visibility("hidden"))) void nativeacct_set_thread_block(const void *block) {
    nativeacct_thread_block_word = block;
}
