package compat;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/** Bookkeeping natives of libcompat plus the program-side counts that tests compare with the agent. */
public final class Native {
    public static final int FUNCTION_COUNT = 93;

    static {
        System.loadLibrary("compat");
    }

    private Native() {}

    /** Loads libcompat (the class initializer does it); programs call this from their own initializer. */
    public static void ensureLoaded() {}

    /** JNI function name of the library's counter index (e.g. "CallStaticIntMethodA"). */
    static native String functionName(int index);

    /** How many times libcompat called that JNI function, over all threads. */
    static native long callCount(int index);

    /** How many JNI upcalls libcompat made on the calling thread. */
    static native long threadCallCount();

    private static final Map<String, LongAdder> NATIVE_CALLS = new ConcurrentHashMap<>();
    private static final Map<String, Long> THREAD_JNI = new ConcurrentHashMap<>();

    /** Records `calls` calls of a native method, keyed "class.name descriptor" (internal class name). */
    public static void countNative(String owner, String name, String descriptor, long calls) {
        NATIVE_CALLS.computeIfAbsent(owner + "." + name + descriptor, k -> new LongAdder()).add(calls);
    }

    /** To be called as the last thing a worker thread does: records its JNI upcall count. */
    public static void recordThreadEnd() {
        long calls = threadCallCount();
        countNative("compat/Native", "threadCallCount", "()J", 1);
        THREAD_JNI.put(Thread.currentThread().getName(), calls);
    }

    /**
     * Runs `work` on `threads` platform threads named `prefix + index` and waits for them all: the sum
     * of what they returned (their wrong results), where a thread that died counts 1.
     */
    public static long runWorkers(int threads, String prefix, LongSupplier work) throws InterruptedException {
        long[] wrong = new long[threads];
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int index = t;
            wrong[t] = 1; // stays 1 if the thread dies
            workers[t] = new Thread(() -> wrong[index] = work.getAsLong(), prefix + t);
            workers[t].start();
        }
        long total = 0;
        for (int t = 0; t < threads; t++) {
            workers[t].join();
            total += wrong[t];
        }
        return total;
    }

    /** One line, "RESULT {json}", with the counts the program knows; `extra` is raw JSON members. */
    public static void printResult(String extra) {
        Map<String, Long> jni = new TreeMap<>();
        for (int i = 0; i < FUNCTION_COUNT; i++) {
            String name = functionName(i);
            long calls = callCount(i);
            countNative("compat/Native", "functionName", "(I)Ljava/lang/String;", 1);
            countNative("compat/Native", "callCount", "(I)J", 1);
            if (calls != 0) jni.put(name, calls);
        }
        StringBuilder out = new StringBuilder("RESULT {\"jni_calls_by_function\":");
        appendMap(out, jni);
        Map<String, Long> natives = new TreeMap<>();
        NATIVE_CALLS.forEach((k, v) -> natives.put(k, v.sum()));
        out.append(",\"native_methods\":");
        appendMap(out, natives);
        out.append(",\"thread_jni_calls\":");
        appendMap(out, new TreeMap<>(THREAD_JNI));
        if (!extra.isEmpty()) out.append(',').append(extra);
        out.append('}');
        System.out.println(out);
    }

    private static void appendMap(StringBuilder out, Map<String, Long> map) {
        out.append('{');
        boolean first = true;
        for (Map.Entry<String, Long> e : map.entrySet()) {
            if (!first) out.append(',');
            first = false;
            out.append('"').append(e.getKey().replace("\\", "\\\\").replace("\"", "\\\""))
                    .append("\":").append(e.getValue());
        }
        out.append('}');
    }
}
