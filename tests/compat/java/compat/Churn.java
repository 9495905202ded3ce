package compat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.stream.Stream;

/**
 * Thread churn: THREADS platform threads in waves of WAVE; each makes PINGS native calls and one
 * native call that makes UPCALLS JNI upcalls, then ends. Reports open file descriptors and RSS after
 * the first wave and after the last one. Usage: Churn THREADS WAVE PINGS UPCALLS
 */
public final class Churn {
    static {
        Native.ensureLoaded();
    }

    private Churn() {}

    static native int ping(int x);

    static native long upcalls(int n);

    /** Called from upcalls through CallStaticIntMethodA. */
    static int back(int i) {
        return i * 2;
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int wave = Integer.parseInt(args[1]);
        int pings = Integer.parseInt(args[2]);
        int upcallsPerThread = Integer.parseInt(args[3]);
        long[] wrong = new long[threads];
        long fdAfterFirstWave = -1;
        long rssAfterFirstWave = -1;
        for (int start = 0; start < threads; start += wave) {
            int end = Math.min(threads, start + wave);
            Thread[] batch = new Thread[end - start];
            for (int t = start; t < end; t++) {
                final int index = t;
                wrong[t] = 1; // stays 1 if the thread dies
                batch[t - start] = new Thread(() -> wrong[index] = work(pings, upcallsPerThread), "churn-" + t);
                batch[t - start].start();
            }
            for (Thread thread : batch) thread.join();
            if (start == 0) {
                settle();
                fdAfterFirstWave = openFds();
                rssAfterFirstWave = rssKib();
            }
        }
        settle();
        long fdAfterLastWave = openFds();
        long rssAfterLastWave = rssKib();
        long errors = 0;
        for (long w : wrong) errors += w;
        Native.printResult("\"errors\":" + errors + ",\"fd_after_first_wave\":" + fdAfterFirstWave
                + ",\"fd_after_last_wave\":" + fdAfterLastWave + ",\"rss_kib_after_first_wave\":"
                + rssAfterFirstWave + ",\"rss_kib_after_last_wave\":" + rssAfterLastWave);
    }

    static long work(int pings, int upcallsPerThread) {
        long wrong = 0;
        for (int i = 0; i < pings; i++) {
            if (ping(i) != (i ^ 0x5a5a)) wrong++;
        }
        Native.countNative("compat/Churn", "ping", "(I)I", pings);
        Native.countNative("compat/Churn", "upcalls", "(I)J", 1);
        if (upcalls(upcallsPerThread) != (long) upcallsPerThread * (upcallsPerThread - 1)) wrong++;
        Native.recordThreadEnd();
        return wrong;
    }

    /** Lets ended threads be reaped and garbage be collected before measuring. */
    static void settle() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
    }

    static long openFds() throws IOException {
        try (Stream<Path> fds = Files.list(Paths.get("/proc/self/fd"))) {
            return fds.count();
        }
    }

    static long rssKib() throws IOException {
        for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
        return -1;
    }
}
