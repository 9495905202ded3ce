import java.io.BufferedReader;
import java.io.InputStreamReader;

/**
 * A long-running service for the control-channel tests (tests/control_*.rs). It works in phases on
 * a thread named "worker" and stops between them: it prints "READY <phase> <truth>" and waits for
 * a line on stdin, so that the test can dump, reset, attach or detach while the worker uses no CPU.
 * The truth is measured in service.c: the worker's own CPU time and the part of it spent inside
 * spin(), and the number of spin() calls and JNI upcalls it made.
 *
 * Usage: java Service PHASES MS_PER_PHASE NATIVE_PCT[,NATIVE_PCT...] [stall]
 * With "stall", a thread named "staller" records its longest gap between two looks at the clock;
 * "STALL <max_ns> <cpu_ns>" is printed at each stop (since the previous one).
 */
public class Service {
    static { System.loadLibrary("service"); }

    /** Burns `nanos` of this thread's CPU in native code after one upcall to tick(). */
    static native void spin(long nanos);
    /** {thread cpu ns, native ns inside spin, spin calls, upcalls} of the calling thread. */
    static native long[] truth();
    /** The calling thread's CPU time. */
    static native long cpuNow();

    static volatile long ticks;
    static void tick() { ticks++; }

    static volatile long sink;
    /** `rounds` × 20,000 steps of bytecode work, with no native call inside. */
    static void javaWork(long rounds) {
        long x = sink;
        for (long r = 0; r < rounds; r++) {
            for (int i = 0; i < 20_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        }
        sink = x;
    }

    /** CPU ns of one javaWork round, measured over about 20 ms. */
    static double nsPerRound() {
        javaWork(200);
        long start = cpuNow();
        long rounds = 0;
        while (cpuNow() - start < 20_000_000L) {
            javaWork(20);
            rounds += 20;
        }
        return (double) (cpuNow() - start) / rounds;
    }

    static volatile long maxGap, stallStart;
    static volatile boolean stalling = true;

    public static void main(String[] args) throws Exception {
        int phases = Integer.parseInt(args[0]);
        long msPerPhase = Long.parseLong(args[1]);
        String[] pcts = args[2].split(",");
        boolean stall = args.length > 3 && args[3].equals("stall");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        Thread staller = null;
        if (stall) {
            staller = new Thread(() -> {
                long last = System.nanoTime();
                while (stalling) {
                    long now = System.nanoTime();
                    if (now - last > maxGap) maxGap = now - last;
                    last = now;
                }
            }, "staller");
            staller.setDaemon(true);
            staller.start();
        }
        final long[][] truth = new long[1][];
        final int[] phase = {0};
        final Object lock = new Object();
        Thread worker = new Thread(() -> {
            try {
                double roundNs = nsPerRound();
                for (int p = 0; p < phases; p++) {
                    synchronized (lock) {
                        while (phase[0] != p + 1) lock.wait();
                    }
                    int pct = Integer.parseInt(pcts[Math.min(p, pcts.length - 1)]);
                    long sliceNs = 2_000_000; // 2 ms of CPU per round
                    long nativeNs = sliceNs * pct / 100;
                    long javaRounds = Math.max(1, Math.round((sliceNs - nativeNs) / roundNs));
                    long end = cpuNow() + msPerPhase * 1_000_000L;
                    while (cpuNow() < end) {
                        javaWork(javaRounds);
                        spin(nativeNs);
                    }
                    synchronized (lock) {
                        truth[0] = truth();
                        phase[0] = -(p + 1);
                        lock.notifyAll();
                    }
                }
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }, "worker");
        worker.start();
        System.out.println("READY 0 0 0 0 0");
        System.out.flush();
        for (int p = 1; p <= phases; p++) {
            if (in.readLine() == null) return;
            synchronized (lock) {
                phase[0] = p;
                lock.notifyAll();
                while (phase[0] != -p) lock.wait();
            }
            long[] t = truth[0];
            if (stall) {
                System.out.println("STALL " + maxGap);
                maxGap = 0;
            }
            System.out.println("READY " + p + " " + t[0] + " " + t[1] + " " + t[2] + " " + t[3]);
            System.out.flush();
        }
        in.readLine();
        worker.join();
        System.out.println("DONE ticks=" + ticks);
    }
}
