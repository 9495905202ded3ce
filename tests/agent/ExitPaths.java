import java.util.ArrayList;
import java.util.List;

/**
 * Ends the JVM one way per mode, after three worker threads made a known number of native calls
 * and with a daemon thread still inside a native call. The agent must leave a report every time.
 *
 * Usage: java ExitPaths MODE
 * MODE: normal, exit-other-thread, uncaught, halt, signal (waits to be killed), oom (ends through
 * -XX:+ExitOnOutOfMemoryError after waiting -Dsettle=MS), stack-overflow (a StackOverflowError
 * thrown inside a JNI upcall, caught), stack-overflow-uncaught (the same, never caught),
 * native-exit (C exit() called inside a native method).
 */
public class ExitPaths {
    static { System.loadLibrary("exitpaths"); }

    static final int WORKERS = 3;
    static final int CALLS_PER_WORKER = 1000;

    /** A trivial native; counts its calls on the C side. */
    static native void tick();
    /** Native → Java (recurse) → native ... until the stack overflows; returns the depth reached. */
    static native int descend(int depth);
    /** How many times descend was entered. */
    static native int descendEntries();
    /** Calls C exit(code) from inside a native method. */
    static native void exitFromNative(int code);
    /** Burns CPU in native code forever (the daemon); publishes that it started. */
    static native void spinInNative();
    static native boolean spinning();

    static int deepest;

    /** The Java half of the recursion: back into native code. */
    static int recurse(int depth) {
        deepest = Math.max(deepest, depth);
        return descend(depth + 1);
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++) {
            Thread t = new Thread(() -> {
                for (int i = 0; i < CALLS_PER_WORKER; i++) tick();
            }, "worker-" + w);
            workers.add(t);
            t.start();
        }
        for (Thread t : workers) t.join();
        Thread daemon = new Thread(ExitPaths::spinInNative, "in-native");
        daemon.setDaemon(true);
        daemon.start();
        while (!spinning()) Thread.sleep(1);

        System.out.println("ready");
        System.out.flush();
        switch (mode) {
            case "normal":
                return;
            case "exit-other-thread": {
                Thread exiter = new Thread(() -> System.exit(7), "exiter");
                exiter.start();
                Thread.sleep(Long.MAX_VALUE);
            }
            case "uncaught":
                throw new IllegalStateException("uncaught on purpose");
            case "halt":
                Runtime.getRuntime().halt(5);
            case "signal":
                Thread.sleep(Long.MAX_VALUE);
            case "oom": {
                Thread.sleep(Long.getLong("settle", 0));
                List<long[]> hog = new ArrayList<>();
                while (true) hog.add(new long[1 << 20]);
            }
            case "stack-overflow":
                try {
                    recurse(0);
                } catch (StackOverflowError e) {
                    System.out.println("overflowed, descend entered " + descendEntries() + " times");
                }
                return;
            case "stack-overflow-uncaught":
                recurse(0);
                return;
            case "native-exit":
                exitFromNative(9);
            default:
                throw new IllegalArgumentException(mode);
        }
    }
}
