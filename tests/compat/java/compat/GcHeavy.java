package compat;

import java.util.ArrayDeque;
import java.util.List;

/**
 * GC pressure with natives on the stack: THREADS threads each call a native ITERATIONS times that
 * builds a list of ITEMS Strings through JNI upcalls, while Java allocates garbage and keeps a
 * rolling window alive. Meant for a small heap. Usage: GcHeavy THREADS ITERATIONS ITEMS
 */
public final class GcHeavy {
    static {
        Native.ensureLoaded();
    }

    private GcHeavy() {}

    static native List<?> fill(int n);

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int iterations = Integer.parseInt(args[1]);
        int items = Integer.parseInt(args[2]);
        long errors = Native.runWorkers(threads, "gc-worker-", () -> work(iterations, items));
        Native.printResult("\"errors\":" + errors);
    }

    static long work(int iterations, int items) {
        long wrong = 0;
        ArrayDeque<Object> window = new ArrayDeque<>();
        for (int i = 0; i < iterations; i++) {
            List<?> list = fill(items);
            if (list == null || list.size() != items || !("item-" + (items - 1)).equals(list.get(items - 1))) {
                wrong++;
            }
            window.addLast(list);
            window.addLast(new byte[16 * 1024 + (i % 7) * 1024]);
            while (window.size() > 16) window.removeFirst();
        }
        Native.countNative("compat/GcHeavy", "fill", "(I)Ljava/util/List;", iterations);
        Native.recordThreadEnd();
        return wrong;
    }
}
