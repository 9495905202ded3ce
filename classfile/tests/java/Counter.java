/** Helper owner for the tests: counts J2N begin/end per method id. */
public class Counter {
    public static final int MAX_IDS = 4096;
    public static final int[] begins = new int[MAX_IDS];
    public static final int[] ends = new int[MAX_IDS];
    public static int totalBegins, totalEnds, depth, maxDepth;

    public static synchronized void begin(int id) {
        begins[id]++;
        totalBegins++;
        depth++;
        if (depth > maxDepth) maxDepth = depth;
    }

    public static synchronized void end(int id) {
        ends[id]++;
        totalEnds++;
        depth--;
    }
}
