import com.sun.jna.Callback;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;
import com.sun.jna.Pointer;

/**
 * JNA both ways: interface mapping (strlen, getpid, qsort with a Java comparator called back from C)
 * and direct mapping (abs and labs bound by Native.register). Prints what it counted itself; the
 * test compares those counts with the agent's report.
 */
public class JnaCheck {
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

    static int comparisons;

    public static void main(String[] args) {
        int directCalls = Integer.parseInt(args[0]);
        CLib c = Native.load("c", CLib.class);
        long length = 0;
        for (int i = 0; i < 100; i++) {
            length += c.strlen("nativeacct").longValue();
        }
        boolean pidMatches = c.getpid() == ProcessHandle.current().pid();
        int n = 200;
        Memory ints = new Memory(4L * n);
        for (int i = 0; i < n; i++) {
            ints.setInt(4L * i, (i * 7919) % n);
        }
        c.qsort(ints, new NativeLong(n), new NativeLong(4), (a, b) -> {
            comparisons++;
            return Integer.compare(a.getInt(0), b.getInt(0));
        });
        boolean sorted = true;
        for (int i = 1; i < n; i++) {
            sorted &= ints.getInt(4L * (i - 1)) <= ints.getInt(4L * i);
        }
        long sum = 0;
        for (int i = 0; i < directCalls; i++) {
            sum += Direct.abs(-i);
            sum += Direct.labs(new NativeLong(-i)).longValue();
        }
        System.out.println("strlen total " + length + ", getpid matches " + pidMatches + ", sorted " + sorted);
        System.out.println("direct calls " + directCalls + " each, sum " + sum);
        System.out.println("comparisons " + comparisons);
    }
}
