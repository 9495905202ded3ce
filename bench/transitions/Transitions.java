/**
 * The transition microbenchmark (scripts/bench-transitions). Each case times a loop of N crossings in one
 * direction, after a warm-up, and prints one line "case NAME COUNT NS_PER_CROSSING" on stdout:
 * <ul>
 *   <li>j2n-static / j2n-instance: Java calls a trivial native method N times (what IPA wraps);</li>
 *   <li>n2j-static / n2j-static-a / n2j-virtual: one native call that makes N trivial JNI upcalls with
 *       CallStaticIntMethod, CallStaticIntMethodA or CallIntMethod (what IPA intercepts in the JNI table);</li>
 *   <li>nested: one native call that makes N upcalls (CallStaticIntMethod) into a Java method that calls
 *       a trivial native: each round is one upcall and one native call inside a native (the JNA shape);
 *       the time is per round;</li>
 *   <li>jni-counted: one native call that makes N calls of ExceptionCheck, a JNI function that runs no
 *       Java (the agent only counts it);</li>
 *   <li>rdtsc: the CPU ns of one bare rdtsc in C (best of 5 loops), the unit of the targets.</li>
 * </ul>
 * Usage: java -Djava.library.path=DIR [-Dcases=NAME,NAME] Transitions [N] [WARMUP]
 */
public final class Transitions {
    static {
        System.loadLibrary("transitions");
    }

    static native int nopStatic(int x);

    native int nopInstance(int x);

    /** Calls {@link #up} n times through CallStaticIntMethod; returns the folded result. */
    static native int upcallStatic(int n);

    /** The same through CallStaticIntMethodA (a jvalue array, no varargs). */
    static native int upcallStaticA(int n);

    /** Calls {@link #upInstance} on {@code target} n times through CallIntMethod. */
    static native int upcallVirtual(Transitions target, int n);

    /** Calls {@link #upNested} n times through CallStaticIntMethod; returns the folded result. */
    static native int nestedOuter(int n);

    /** Calls ExceptionCheck n times. */
    static native int jniCounted(int n);

    /** CPU ns per bare rdtsc, over n back-to-back reads in C. */
    static native double rdtscNs(int n);

    static int up(int x) {
        return x + 1;
    }

    static int upNested(int x) {
        return nopStatic(x);
    }

    int upInstance(int x) {
        return x + 3;
    }

    static volatile int sink;

    interface Case {
        int run(int n);
    }

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 50_000_000;
        int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 5_000_000;
        Transitions self = new Transitions();
        measure("j2n-static", n, warmup, count -> {
            int acc = 0;
            for (int i = 0; i < count; i++) {
                acc = nopStatic(acc);
            }
            return acc;
        });
        measure("j2n-instance", n, warmup, count -> {
            int acc = 0;
            for (int i = 0; i < count; i++) {
                acc = self.nopInstance(acc);
            }
            return acc;
        });
        measure("n2j-static", n, warmup, Transitions::upcallStatic);
        measure("n2j-static-a", n, warmup, Transitions::upcallStaticA);
        measure("n2j-virtual", n, warmup, count -> upcallVirtual(self, count));
        measure("nested", n, warmup, Transitions::nestedOuter);
        measure("jni-counted", n, warmup, Transitions::jniCounted);
        String only = System.getProperty("cases");
        if (only == null || only.contains("rdtsc")) {
            double best = Double.MAX_VALUE;
            for (int i = 0; i < 5; i++) {
                best = Math.min(best, rdtscNs(20_000_000));
            }
            System.out.printf("case rdtsc %d %.3f %.3f%n", 20_000_000, best, best);
        }
    }

    static void measure(String name, int n, int warmup, Case body) {
        String only = System.getProperty("cases");
        if (only != null && !java.util.Arrays.asList(only.split(",")).contains(name)) {
            return;
        }
        // Warm-up in slices, so the loops are JIT-compiled before the timed run.
        for (int i = 0; i < 5; i++) {
            sink = body.run(warmup / 5);
        }
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long cpu0 = threads.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        sink = body.run(n);
        long elapsed = System.nanoTime() - t0;
        long cpu = threads.getCurrentThreadCpuTime() - cpu0;
        System.out.printf("case %s %d %.3f %.3f%n", name, n, (double) elapsed / n, (double) cpu / n);
    }
}
