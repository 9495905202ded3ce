/**
 * A fixed amount of work on THREADS threads (default 2, one per core of the benchmark machine):
 * integer arithmetic with a little allocation, the same every run, so that two runs differ in CPU time
 * only by what the agent's configuration adds. Usage: Busy ITERATIONS [THREADS]
 */
public final class Busy {
    static volatile long sink;

    public static void main(String[] args) throws InterruptedException {
        long iterations = Long.parseLong(args[0]);
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final long seed = t + 1;
            workers[t] = new Thread(() -> {
                long x = seed;
                for (long i = 0; i < iterations; i++) {
                    x = x * 6364136223846793005L + 1442695040888963407L;
                    if ((i & 0xfff) == 0) sink += new long[16].length;
                }
                sink += x;
            }, "busy-" + t);
            workers[t].start();
        }
        for (Thread w : workers) w.join();
    }
}
