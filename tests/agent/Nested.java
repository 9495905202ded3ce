import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * Java that the VM runs inside a native without a JNI call: {@code Class.forName} initializes
 * {@code Inner} from inside the native {@code Class.forName0}. Its {@code <clinit>} calls the native
 * {@code spin} and then runs a bytecode loop. Both times are measured here, with the thread's own
 * CPU clock, and printed for the test to compare with the agent's report.
 */
public class Nested {
    static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

    /** Burns at least {@code cpuNs} of this thread's CPU time in C; returns what it used. */
    static native long spin(long cpuNs);

    static long spinNs;
    static long javaNs;
    static volatile long sink;

    static class Inner {
        static {
            spinNs = spin(200_000_000L);
            long start = CPU.getCurrentThreadCpuTime();
            long x = 0;
            while (CPU.getCurrentThreadCpuTime() - start < 100_000_000L) {
                for (int i = 0; i < 10_000; i++) {
                    x = x * 31 + i;
                }
            }
            sink = x;
            javaNs = CPU.getCurrentThreadCpuTime() - start;
        }
    }

    public static void main(String[] args) throws Exception {
        System.loadLibrary("nested");
        CPU.getCurrentThreadCpuTime(); // load the management classes outside the measured part
        Class.forName("Nested$Inner", true, Nested.class.getClassLoader());
        System.out.println("spin_ns=" + spinNs + " java_ns=" + javaNs);
    }
}
