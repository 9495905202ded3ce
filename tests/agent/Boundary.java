/**
 * The known-answer fixture of the boundary parts (tests/agent_boundary.rs). A native runs rounds
 * of: fixed C work (native code), one upcall into fixed Java work (the upcall's machinery is JVM
 * for Java, the work Java code) and a few cheap JNI functions (JVM for native code).
 *
 * `truth SECONDS`: each ingredient alone, in batches taken in turn, each timed with the thread's
 * CPU clock read only at its ends; prints the CPU ns per round of each.
 * `mixed SECONDS`: the rounds, on a thread named "mixed", until that thread has used SECONDS of
 * CPU; prints the rounds.
 * `count REPS`: calls 46 different JNI functions (one of them an upcall) REPS times over; prints
 * how often it called each one ("Name=count" words), counted by the fixture itself.
 */
public class Boundary {
    static { System.loadLibrary("boundary"); }

    static final int C_WORK = 150;
    static final int JAVA_WORK = 120;
    static final int JNI_CALLS = 12;

    static long sink;

    /** The fixed Java work (kept out of line: -XX:CompileCommand=dontinline). */
    static long javaWork(int n) {
        long x = n;
        for (int i = 0; i < n; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= x >>> 29;
        }
        return x;
    }

    /** An upcall target that does nothing: the upcall's machinery alone. */
    static long empty(int n) {
        return n;
    }

    /** The mixed rounds until the calling thread's CPU time passes `cpuNs`; returns the rounds. */
    static native long mixed(long cpuNs, int cWork, int javaWork, int jniCalls);
    /** `rounds` of the C work alone. */
    static native long cOnly(long rounds, int cWork);
    /** `rounds` upcalls into `empty`. */
    static native long upcallOnly(long rounds);
    /** `rounds` of the cheap JNI functions alone. */
    static native long jniOnly(long rounds, int jniCalls);
    /** Calls many different JNI functions `reps` times over. */
    static native void exercise(int reps);
    /** The JNI functions `exercise` called, as "Name=count" words. */
    static native String jniCounts();
    /** The calling thread's CPU time in ns. */
    static native long cpuNs();

    static long javaOnly(long rounds) {
        long x = 0;
        for (long r = 0; r < rounds; r++) {
            x += javaWork(JAVA_WORK);
        }
        return x;
    }

    static double[] truth(double seconds) {
        // Rounds per batch: about 50 ms of each ingredient.
        long[] rounds = new long[4];
        double[] perRound = new double[4];
        for (int k = 0; k < 4; k++) {
            long n = 1000;
            long t = timed(k, n);
            rounds[k] = Math.max(1000, (long) (n * 50e6 / Math.max(t, 1)));
        }
        long[] ns = new long[4];
        long[] done = new long[4];
        long start = cpuNs();
        while (cpuNs() - start < seconds * 1e9) {
            for (int k = 0; k < 4; k++) {
                ns[k] += timed(k, rounds[k]);
                done[k] += rounds[k];
            }
        }
        for (int k = 0; k < 4; k++) {
            perRound[k] = (double) ns[k] / done[k];
        }
        return perRound;
    }

    /** CPU ns of `n` rounds of ingredient `k`: 0 C work, 1 Java work, 2 upcall, 3 JNI functions. */
    static long timed(int k, long n) {
        long t0 = cpuNs();
        switch (k) {
            case 0: sink += cOnly(n, C_WORK); break;
            case 1: sink += javaOnly(n); break;
            case 2: sink += upcallOnly(n); break;
            default: sink += jniOnly(n, JNI_CALLS); break;
        }
        return cpuNs() - t0;
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("count")) {
            exercise(Integer.parseInt(args[1]));
            System.out.println(jniCounts());
            return;
        }
        double seconds = Double.parseDouble(args[1]);
        // Warm up every path (JIT-compile javaWork and empty) before anything is measured.
        for (int i = 0; i < 3; i++) {
            for (int k = 0; k < 4; k++) {
                timed(k, 20000);
            }
            sink += mixed(cpuNs() + 20_000_000L, C_WORK, JAVA_WORK, JNI_CALLS);
        }
        if (args[0].equals("truth")) {
            double[] t = truth(seconds);
            System.out.printf("c_ns=%.3f java_ns=%.3f upcall_ns=%.3f jni_ns=%.3f%n", t[0], t[1], t[2], t[3]);
        } else {
            long[] rounds = new long[1];
            Thread t = new Thread(() -> {
                rounds[0] = mixed(cpuNs() + (long) (seconds * 1e9), C_WORK, JAVA_WORK, JNI_CALLS);
            }, "mixed");
            t.start();
            t.join();
            System.out.println("rounds=" + rounds[0] + " sink=" + (sink & 1));
        }
    }
}
