package compat;

import java.lang.reflect.Method;

/**
 * Virtual threads (JDK 21+): COUNT virtual threads each make CALLS native calls with one JNI upcall
 * each, sleeping between them (unmounting from the carrier), then one native that blocks for
 * BLOCK_US and spins for SPIN_US of CPU inside native code. Compiled for release 11, so virtual
 * threads are started through reflection. Usage: VThreads COUNT CALLS BLOCK_US SPIN_US
 */
public final class VThreads {
    static {
        Native.ensureLoaded();
    }

    private VThreads() {}

    static native int vping(int x);

    static native void vblock(int micros, int spinMicros);

    /** Called from vping through CallStaticShortMethodV. */
    static short back(int x) {
        return (short) (x + 1);
    }

    public static void main(String[] args) throws Exception {
        int count = Integer.parseInt(args[0]);
        int calls = Integer.parseInt(args[1]);
        int blockMicros = Integer.parseInt(args[2]);
        int spinMicros = Integer.parseInt(args[3]);
        Method startVirtual = Thread.class.getMethod("startVirtualThread", Runnable.class);
        long[] wrong = new long[count];
        Thread[] started = new Thread[count];
        for (int v = 0; v < count; v++) {
            final int index = v;
            wrong[v] = 1; // stays 1 if the thread dies
            Runnable body = () -> {
                long bad = 0;
                try {
                    for (int c = 0; c < calls; c++) {
                        if (vping(c) != c + 1) bad++;
                        Thread.sleep(1);
                    }
                    vblock(blockMicros, spinMicros);
                } catch (InterruptedException e) {
                    bad++;
                }
                wrong[index] = bad;
            };
            started[v] = (Thread) startVirtual.invoke(null, body);
        }
        long errors = 0;
        for (int v = 0; v < count; v++) {
            started[v].join();
            errors += wrong[v];
        }
        Native.countNative("compat/VThreads", "vping", "(I)I", (long) count * calls);
        Native.countNative("compat/VThreads", "vblock", "(II)V", count);
        Native.printResult("\"errors\":" + errors + ",\"native_spin_ns\":" + (long) count * spinMicros * 1000L);
    }
}
