package compat;

/**
 * Integration program with known counts: plain natives, nested J2N -> N2J -> J2N chains, exceptions
 * thrown from native and from Java through JNI, and every one of the 93 wrapped JNI functions, on
 * several threads. Usage: Known ROUNDS THREADS NEST_DEPTH (ROUNDS = 0 runs everything but the work).
 */
public final class Known {
    static final int ADDS_PER_THREAD = 20_000;
    static final int CHAINS_PER_THREAD = 5;
    static final int THROWS_PER_THREAD = 50;

    static {
        Native.ensureLoaded();
    }

    private Known() {}

    static native int add(int x, int y);

    static native long nestDown(int depth);

    static native void throwNative(int code);

    static native int callThrower(int code);

    static native long battery(Object subTarget, Object marker, int rounds);

    /** Called from nestDown through CallStaticLongMethod. */
    static long nestUp(int depth) {
        if (depth == 0) return 0;
        Native.countNative("compat/Known", "nestDown", "(I)J", 1);
        return 1 + nestDown(depth - 1);
    }

    /** Called from callThrower through CallStaticVoidMethod. */
    static void thrower(int code) {
        throw new IllegalArgumentException("thrown from Java " + code);
    }

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int threads = Integer.parseInt(args[1]);
        int depth = Integer.parseInt(args[2]);
        long totalErrors = Native.runWorkers(threads, "known-worker-", () -> work(rounds, depth));
        totalErrors += Target.ERRORS.get();
        Native.printResult("\"errors\":" + totalErrors);
    }

    /** Returns how many results were wrong. */
    static long work(int rounds, int depth) {
        long wrong = 0;
        if (rounds > 0) {
            long sum = 0;
            for (int i = 0; i < ADDS_PER_THREAD; i++) sum += add(i, 1);
            Native.countNative("compat/Known", "add", "(II)I", ADDS_PER_THREAD);
            if (sum != (long) ADDS_PER_THREAD * (ADDS_PER_THREAD + 1) / 2) wrong++;

            for (int c = 0; c < CHAINS_PER_THREAD; c++) {
                Native.countNative("compat/Known", "nestDown", "(I)J", 1);
                if (nestDown(depth) != 2L * depth + 1) wrong++;
            }
            for (int i = 0; i < THROWS_PER_THREAD; i++) {
                try {
                    Native.countNative("compat/Known", "throwNative", "(I)V", 1);
                    throwNative(i);
                    wrong++;
                } catch (IllegalStateException expected) {
                    if (!expected.getMessage().equals("thrown from native " + i)) wrong++;
                }
                Native.countNative("compat/Known", "callThrower", "(I)I", 1);
                if (callThrower(i) != 1) wrong++;
            }
            Native.countNative("compat/Known", "battery", "(Ljava/lang/Object;Ljava/lang/Object;I)J", 1);
            wrong += battery(new SubTarget(), Target.MARKER, rounds);
        }
        Native.recordThreadEnd();
        return wrong;
    }
}
