/** Helper owner for the tests: counts J2N begin/end per method id. */
public class Counter {
    public static final int MAX_IDS = 4096;
    public static final int[] begins = new int[MAX_IDS];
    public static final int[] ends = new int[MAX_IDS];
    /** Open natives summed over all threads, and the deepest nesting seen on any one thread. */
    public static int totalBegins, totalEnds, depth, maxDepth;
    /** Nesting is per thread: natives on different threads overlap without nesting. */
    private static final ThreadLocal<int[]> threadDepth = ThreadLocal.withInitial(() -> new int[1]);

    public static synchronized void begin(int id) {
        begins[id]++;
        totalBegins++;
        depth++;
        int[] mine = threadDepth.get();
        mine[0]++;
        if (mine[0] > maxDepth) maxDepth = mine[0];
    }

    public static synchronized void end(int id) {
        ends[id]++;
        totalEnds++;
        depth--;
        threadDepth.get()[0]--;
    }
}
