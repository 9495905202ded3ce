import java.io.FileWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * End-to-end workload for the agent tests. It makes a known number of native calls and JNI upcalls
 * and writes ground truth (measured in its own C code with CLOCK_THREAD_CPUTIME_ID) to the file named
 * by -Dtruth=PATH. Stdout carries only deterministic results, so runs with and without the agent can
 * be compared byte for byte.
 *
 * Usage: java -Dtruth=PATH [-Dworkers=N] [-Dsleepy=true] Workload ROUNDS [REPS]
 * ROUNDS sets the CPU-split part (N threads, 8 by default), REPS repeats the JNI part (chains, exceptions, every call
 * style, the attached thread), so that two runs with different REPS differ by exactly known counts.
 */
public class Workload {
    static { System.loadLibrary("workload"); }

    // ---- natives (implemented in workload.c) -------------------------------------------------
    /** Burns `nanos` of this thread's CPU in native code; adds it to the thread's native ground truth. */
    static native void spin(long nanos);
    /** Sleeps 6 × `nanos`, then burns `nanos` of CPU (wall time 7 × CPU); all of it is native ground truth. */
    static native void sleepThenSpin(long nanos);
    /** Native → Java → native chain: calls nestJava(depth) through CallStaticIntMethod. */
    static native int nest(int depth);
    /** Throws IllegalStateException from native code. */
    static native void throwFromNative(int code);
    /** Calls Java thrower() through CallStaticVoidMethod and returns with the exception pending. */
    static native void callJavaThatThrows();
    /** Calls each of the 90 Call*Method* functions and the 3 NewObject* once, with 12 mixed arguments. */
    native int callEveryStyle(Object marker);
    /** A native thread attaches, calls fromNative() `calls` times through CallStaticIntMethod, detaches. */
    static native int runAttachedThread(int calls);
    /** This thread's CPU time and native ground truth so far, and its slot for lifeCpuNs: {cpu_ns, native_ns, slot}. */
    static native long[] threadTruth();
    /** CPU time over the whole life of the thread that took `slot`, once it ended (-1 if it did not). */
    static native long lifeCpuNs(int slot);
    /** Native used only by the daemon thread: one long call that is still running at exit. */
    static native void daemonSpin(long nanos);
    /** CPU ns the daemon has burned inside daemonSpin so far. */
    static native long daemonBurnedNs();

    // ---- Java side of the upcalls ----------------------------------------------------------------
    static int nestJava(int depth) { return nest(depth - 1) + 1; }
    static void thrower() { throw new UnsupportedOperationException("from Java"); }
    static volatile int fromNativeCount;
    static int fromNative(int x) { fromNativeCount++; return x + 1; }

    /** Checksum of the 12 arguments, identical to the C side's. */
    static long lastSum;
    static long sum(int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k,
                    boolean l) {
        long s = a + b * 3 + (long) (c * 5) + (d != null ? 7 : 0) + e * 11L + f * 13 + (long) (g * 17)
                + (long) (h * 19) + i * 23L + j * 29L + k * 31L + (l ? 37 : 0);
        lastSum = s;
        return s;
    }
    // One static and one instance method per JNI return type, all with the same 12 parameters.
    static Object  sObject (int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { sum(a,b,c,d,e,f,g,h,i,j,k,l); return d; }
    static boolean sBoolean(int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { return (sum(a,b,c,d,e,f,g,h,i,j,k,l) & 1) == 1; }
    static byte    sByte   (int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { return (byte) sum(a,b,c,d,e,f,g,h,i,j,k,l); }
    static char    sChar   (int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { return (char) sum(a,b,c,d,e,f,g,h,i,j,k,l); }
    static short   sShort  (int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { return (short) sum(a,b,c,d,e,f,g,h,i,j,k,l); }
    static int     sInt    (int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { return (int) sum(a,b,c,d,e,f,g,h,i,j,k,l); }
    static long    sLong   (int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { return sum(a,b,c,d,e,f,g,h,i,j,k,l); }
    static float   sFloat  (int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { return (float) (sum(a,b,c,d,e,f,g,h,i,j,k,l) % 1000); }
    static double  sDouble (int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { return (double) sum(a,b,c,d,e,f,g,h,i,j,k,l); }
    static void    sVoid   (int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { sum(a,b,c,d,e,f,g,h,i,j,k,l); }
    Object  iObject (int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { return sObject(a,b,c,d,e,f,g,h,i,j,k,l); }
    boolean iBoolean(int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { return sBoolean(a,b,c,d,e,f,g,h,i,j,k,l); }
    byte    iByte   (int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { return sByte(a,b,c,d,e,f,g,h,i,j,k,l); }
    char    iChar   (int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { return sChar(a,b,c,d,e,f,g,h,i,j,k,l); }
    short   iShort  (int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { return sShort(a,b,c,d,e,f,g,h,i,j,k,l); }
    int     iInt    (int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { return sInt(a,b,c,d,e,f,g,h,i,j,k,l); }
    long    iLong   (int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { return sLong(a,b,c,d,e,f,g,h,i,j,k,l); }
    float   iFloat  (int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { return sFloat(a,b,c,d,e,f,g,h,i,j,k,l); }
    double  iDouble (int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { return sDouble(a,b,c,d,e,f,g,h,i,j,k,l); }
    void    iVoid   (int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) { sVoid(a,b,c,d,e,f,g,h,i,j,k,l); }

    /** Constructed through NewObject, NewObjectA and NewObjectV. */
    static int constructed;
    Workload() {}
    Workload(int a, long b, double c, Object d, int e, long f, double g, float h, short i, byte j, char k, boolean l) {
        sum(a, b, c, d, e, f, g, h, i, j, k, l);
        constructed++;
    }

    // ---- the bytecode half of the CPU split ---------------------------------------------------------
    static volatile long sink;
    /** Pure bytecode work: `iterations` rounds of an LCG (no calls, no allocation). */
    static void javaWork(long iterations) {
        long x = sink;
        for (long i = 0; i < iterations; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= (x >>> 29);
        }
        sink = x;
    }

    /** Iterations of javaWork that take about `nanos` of CPU once compiled. */
    static long calibrate(long nanos) {
        javaWork(5_000_000); // warm up so the JIT compiles the loop
        long n = 20_000_000;
        long before = threadTruth()[0];
        javaWork(n);
        long took = Math.max(1, threadTruth()[0] - before);
        return Math.max(1, n * nanos / took);
    }

    static final int WORKERS = Integer.getInteger("workers", 8);
    /** -Dsleepy=true: the workers' natives sleep before they spin (sleepThenSpin instead of spin). */
    static final boolean SLEEPY = Boolean.getBoolean("sleepy");
    /** The daemon is inside its native call with at least this much CPU when the VM exits. */
    static final long DAEMON_MIN_NS = 100_000_000;
    static final long SLICE_NS = 2_000_000;

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int reps = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        String truthPath = System.getProperty("truth");
        Workload self = new Workload();
        long javaSlice = calibrate(SLICE_NS);

        // The workers: about 60 % native (3 native slices per 2 bytecode slices).
        List<Thread> workers = new ArrayList<>();
        long[][] truth = new long[WORKERS][];
        for (int w = 0; w < WORKERS; w++) {
            final int id = w;
            Thread t = new Thread(() -> {
                long[] before = threadTruth();
                for (int r = 0; r < rounds; r++) {
                    javaWork(2 * javaSlice);
                    if (SLEEPY) sleepThenSpin(3 * SLICE_NS); else spin(3 * SLICE_NS);
                }
                long[] after = threadTruth();
                truth[id] = new long[] {after[0] - before[0], after[1] - before[1], after[2]};
            }, "worker-" + w);
            workers.add(t);
            t.start();
        }
        for (Thread t : workers) t.join();
        // The agent's figures for a worker lie between what it measured above and its whole life.
        for (int w = 0; w < WORKERS; w++) {
            truth[w][2] = lifeCpuNs((int) truth[w][2]);
            if (truth[w][2] < 0) throw new IllegalStateException("worker-" + w + " never ended");
        }

        for (int rep = 0; rep < reps; rep++) {
            // Nested chains: nest(5) = 6 natives and 5 upcalls each.
            int nested = 0;
            for (int i = 0; i < 10; i++) nested += nest(5);
            System.out.println("nested " + nested);

            // Exceptions from native code and from Java through JNI.
            int caught = 0;
            for (int i = 0; i < 7; i++) {
                try { throwFromNative(i); } catch (IllegalStateException e) { caught++; }
            }
            for (int i = 0; i < 4; i++) {
                try { callJavaThatThrows(); } catch (UnsupportedOperationException e) { caught++; }
            }
            System.out.println("caught " + caught);

            // Every JNI call style, once each, with 12 mixed arguments.
            System.out.println("styles ok " + self.callEveryStyle(self) + " constructed " + constructed);

            // A native thread attached with AttachCurrentThread calls Java.
            System.out.println("attached " + runAttachedThread(25) + " fromNative " + fromNativeCount);
        }

        if (truthPath != null) {
            try (PrintWriter out = new PrintWriter(new FileWriter(truthPath))) {
                for (int w = 0; w < WORKERS; w++) {
                    out.println("worker-" + w + " " + truth[w][0] + " " + truth[w][1] + " " + truth[w][2]);
                }
            }
        }

        // A daemon thread still inside native code at exit, and System.exit from a non-main thread.
        Thread daemon = new Thread(() -> daemonSpin(600_000_000_000L), "daemon-spinner");
        daemon.setDaemon(true);
        daemon.start();
        while (daemonBurnedNs() < DAEMON_MIN_NS) Thread.sleep(5);
        System.out.println("done");
        System.out.flush();
        Thread exiter = new Thread(() -> System.exit(0), "exiter");
        exiter.start();
        exiter.join();
    }
}
