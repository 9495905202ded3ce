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
 * With "stall", a thread named "staller" records its longest gap between two looks at the clock,
 * and the longest time it was stopped (not running, not waiting for a CPU): "STALL <gap_ns>
 * <stopped_ns>" is printed at each stop (since the previous one).
 */
public class Service {
    static { System.loadLibrary("service"); }

    /**
     * Burns `nanos` of this thread's CPU in native code after one upcall to tick(); returns the
     * thread's CPU time at its end, so that the worker's loop needs no other native call (the truth
     * counts only spin's own loop as native time).
     */
    static native long spin(long nanos);
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

    static volatile long maxGap, maxBlocked;

    /** {ns on a CPU, ns waiting for one} of the calling thread, from the kernel's schedstat. */
    static long[] schedstat() {
        try {
            String[] f = new String(java.nio.file.Files.readAllBytes(
                    java.nio.file.Paths.get("/proc/thread-self/schedstat"))).trim().split(" ");
            return new long[] {Long.parseLong(f[0]), Long.parseLong(f[1])};
        } catch (java.io.IOException e) {
            return new long[] {0, 0};
        }
    }

    /**
     * Spin, looking at the clock. maxGap: the longest gap between two looks. maxBlocked: the
     * longest time around a gap over 1 ms that the thread was neither running nor waiting for a
     * CPU, i.e. stopped by something (a lock, a safepoint), not by the scheduler.
     */
    static void stall() {
        long[] before = schedstat();
        long beforeAt = System.nanoTime(), last = beforeAt;
        while (true) {
            long now = System.nanoTime();
            long gap = now - last;
            if (gap > maxGap) maxGap = gap;
            if (gap > 1_000_000 || now - beforeAt > 1_000_000) {
                long[] after = schedstat();
                long blocked = (now - beforeAt) - (after[0] - before[0]) - (after[1] - before[1]);
                if (gap > 1_000_000 && blocked > maxBlocked) maxBlocked = blocked;
                before = after;
                beforeAt = System.nanoTime();
                now = beforeAt;
            }
            last = now;
        }
    }

    public static void main(String[] args) throws Exception {
        int phases = Integer.parseInt(args[0]);
        long msPerPhase = Long.parseLong(args[1]);
        String[] pcts = args[2].split(",");
        boolean stall = args.length > 3 && args[3].equals("stall");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        Thread staller = null;
        if (stall) {
            staller = new Thread(Service::stall, "staller");
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
                    long now;
                    do {
                        javaWork(javaRounds);
                        now = spin(nativeNs);
                    } while (now < end);
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
                System.out.println("STALL " + maxGap + " " + maxBlocked);
                maxGap = 0;
                maxBlocked = 0;
            }
            System.out.println("READY " + p + " " + t[0] + " " + t[1] + " " + t[2] + " " + t[3]);
            System.out.flush();
        }
        in.readLine();
        worker.join();
        System.out.println("DONE ticks=" + ticks);
    }
}
