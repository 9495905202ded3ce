import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.zip.Deflater;

/**
 * Thread churn: starts THREADS short threads, PARALLEL at a time, each doing CALLS small Deflater
 * compressions (a few JDK native calls each), and joins them all. Prints, at each checkpoint (the
 * 1,000th thread, every 20,000th, and the last), the thread count, the process CPU and wall time
 * since the first checkpoint, and the resident set size:
 *   checkpoint THREADS CPU_NS WALL_NS RSS_KB
 * and at the end the native calls the workers made:
 *   calls DEFLATE_CALLS
 *
 * Usage: java Churn THREADS [PARALLEL] [CALLS]
 */
public class Churn {
    static long deflateCalls(int calls) {
        byte[] input = new byte[512];
        byte[] output = new byte[1024];
        long n = 0;
        for (int i = 0; i < calls; i++) {
            input[i % input.length] = (byte) i;
            Deflater d = new Deflater(1);
            d.setInput(input);
            d.finish();
            while (!d.finished()) {
                d.deflate(output);
                n++;
            }
            d.end();
        }
        return n;
    }

    static long rssKb() throws Exception {
        for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
        return -1;
    }

    static long cpuNs() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int parallel = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        int calls = args.length > 2 ? Integer.parseInt(args[2]) : 4;
        int first = Math.min(1000, threads);
        long[] deflates = new long[1];
        Thread[] running = new Thread[parallel];
        long cpu0 = 0, wall0 = 0;
        for (int t = 0; t < threads; t++) {
            int slot = t % parallel;
            if (running[slot] != null) running[slot].join();
            Thread th = new Thread(() -> {
                long n = deflateCalls(calls);
                synchronized (deflates) { deflates[0] += n; }
            }, "churn-" + t);
            running[slot] = th;
            th.start();
            if (t + 1 == first) {
                for (Thread r : running) if (r != null) r.join();
                System.gc();
                cpu0 = cpuNs();
                wall0 = System.nanoTime();
                System.out.println("checkpoint " + first + " 0 0 " + rssKb());
            } else if ((t + 1) % 20_000 == 0 && t + 1 < threads) {
                System.out.println("checkpoint " + (t + 1) + " " + (cpuNs() - cpu0) + " " + (System.nanoTime() - wall0) + " " + rssKb());
            }
        }
        for (Thread r : running) if (r != null) r.join();
        System.gc();
        System.out.println("checkpoint " + threads + " " + (cpuNs() - cpu0) + " " + (System.nanoTime() - wall0) + " " + rssKb());
        synchronized (deflates) { System.out.println("calls " + deflates[0]); }
    }
}
