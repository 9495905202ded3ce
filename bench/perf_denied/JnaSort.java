import com.sun.jna.Callback;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;
import com.sun.jna.Pointer;

/**
 * A crossing-heavy JNA program: libc's qsort sorts ints, calling a Java comparator back through JNA
 * for every comparison (each callback is a JNI upcall and the natives JNA makes inside it).
 * Usage: java -cp jna.jar:. JnaSort ROUNDS N. Prints the comparisons it counted.
 */
public class JnaSort {
    public interface CLib extends Library {
        void qsort(Pointer base, NativeLong count, NativeLong size, Comparator compare);

        interface Comparator extends Callback {
            int invoke(Pointer a, Pointer b);
        }
    }

    static long comparisons;

    public static void main(String[] args) {
        int rounds = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        CLib c = Native.load("c", CLib.class);
        Memory ints = new Memory(4L * n);
        CLib.Comparator compare = (a, b) -> {
            comparisons++;
            return Integer.compare(a.getInt(0), b.getInt(0));
        };
        long seed = 42;
        for (int round = 0; round < rounds; round++) {
            for (int i = 0; i < n; i++) {
                seed = seed * 6364136223846793005L + 1442695040888963407L;
                ints.setInt(4L * i, (int) (seed >>> 33));
            }
            c.qsort(ints, new NativeLong(n), new NativeLong(4), compare);
        }
        for (int i = 1; i < n; i++) {
            if (ints.getInt(4L * (i - 1)) > ints.getInt(4L * i)) throw new AssertionError("not sorted");
        }
        System.out.println("comparisons " + comparisons);
    }
}
