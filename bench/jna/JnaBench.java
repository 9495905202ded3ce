import com.sun.jna.Callback;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;
import com.sun.jna.Pointer;

/**
 * The crossing-heavy JNA benchmark (scripts/bench-jna): a fixed amount of work, so that process CPU
 * time with and without the agent compares directly. Each round:
 * <ul>
 *   <li>sorts 200 ints with libc's {@code qsort} through interface mapping, with a Java comparator
 *       that qsort calls back (each call back is JNI upcalls: {@code CallObjectMethod},
 *       {@code NewObject});</li>
 *   <li>calls {@code strlen} and {@code getpid} through interface mapping (JNA's dispatch natives);</li>
 *   <li>calls {@code abs} and {@code labs} through direct mapping ({@code Native.register}: bound
 *       natives whose C function is libc's).</li>
 * </ul>
 * Usage: java -cp DIR:jna.jar -Djna.library.path=DIR JnaBench ROUNDS [rdtsc]. Prints its own counts,
 * {@code System.nanoTime()} at main's entry and, with {@code rdtsc}, the CPU ns of one bare rdtsc on this host (librdtsc.so, best of 5 loops).
 */
public class JnaBench {
    public interface CLib extends Library {
        NativeLong strlen(String s);

        int getpid();

        void qsort(Pointer base, NativeLong count, NativeLong size, Comparator compare);

        interface Comparator extends Callback {
            int invoke(Pointer a, Pointer b);
        }
    }

    public static class Direct {
        static {
            Native.register("c");
        }

        public static native int abs(int x);

        public static native NativeLong labs(NativeLong x);
    }

    public static class Rdtsc {
        static {
            Native.register("rdtsc");
        }

        /** CPU ns per bare rdtsc over n back-to-back reads (bench/jna/rdtsc.c). */
        public static native double rdtsc_ns(int n);
    }

    static long comparisons;

    public static void main(String[] args) {
        long mainStart = System.nanoTime();
        int rounds = Integer.parseInt(args[0]);
        boolean rdtsc = args.length > 1 && args[1].equals("rdtsc");
        CLib c = Native.load("c", CLib.class);
        int n = 200;
        Memory ints = new Memory(4L * n);
        CLib.Comparator byValue = (a, b) -> {
            comparisons++;
            return Integer.compare(a.getInt(0), b.getInt(0));
        };
        long length = 0;
        long pids = 0;
        long sum = 0;
        long direct = 0;
        long start = System.nanoTime();
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < n; i++) {
                ints.setInt(4L * i, ((i + r) * 7919) % n);
            }
            c.qsort(ints, new NativeLong(n), new NativeLong(4), byValue);
            for (int i = 0; i < 20; i++) {
                length += c.strlen("nativeacct").longValue();
                pids += c.getpid();
            }
            for (int i = 0; i < 2000; i++) {
                sum += Direct.abs(-i);
                sum += Direct.labs(new NativeLong(-i)).longValue();
                direct += 2;
            }
        }
        long elapsed = System.nanoTime() - start;
        System.out.println("rounds " + rounds + " comparisons " + comparisons + " interface_calls "
                + (rounds * 41L) + " direct_calls " + direct + " wall_ms " + elapsed / 1_000_000
                + " check " + (length + sum + pids % 7));
        // CLOCK_MONOTONIC at main's entry, to match `perf record -k CLOCK_MONOTONIC` samples.
        System.out.println("main_ns " + mainStart);
        if (rdtsc) {
            double best = Double.MAX_VALUE;
            for (int i = 0; i < 5; i++) {
                best = Math.min(best, Rdtsc.rdtsc_ns(20_000_000));
            }
            System.out.printf("rdtsc_ns %.3f%n", best);
        }
    }
}
