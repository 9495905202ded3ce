import java.util.Map;
import java.util.TreeMap;

/** Calls every test native, checks each result against its own computation, counts its own calls. */
public class Main {
    static final Map<String, Integer> expected = new TreeMap<>();

    static void called(String name) {
        synchronized (expected) {
            expected.merge(name, 1, Integer::sum);
        }
    }

    static void check(boolean ok, String what) {
        if (!ok) throw new AssertionError("check failed: " + what);
    }

    static void result(String line) {
        System.out.println("result " + line);
    }

    static void setGate(boolean on) throws Exception {
        java.lang.reflect.Field gate = Gate.class.getDeclaredField("j2n$on");
        gate.setAccessible(true);
        gate.setBoolean(null, on);
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        if (mode.equals("gate")) setGate(true);

        check(Natives.add(2, 3) == 5, "add"); called("Natives.add");
        Natives n = new Natives(7);
        check(n.scale(6L, 7) == 49L, "scale"); called("Natives.scale");
        check(Natives.mix(1.5, 0.25f, 10L, 3) == 16.25, "mix"); called("Natives.mix");
        check(Natives.packSmall((byte) 2, 'A', (short) 30, true) == 2 * 100000 + 65 * 100 + 30 + 7, "packSmall");
        called("Natives.packSmall");
        check(Natives.join("ab", "cd").equals("ab+cd"), "join"); called("Natives.join");
        int[] rev = Natives.reversed(new int[] {1, 2, 3}); called("Natives.reversed");
        check(rev.length == 3 && rev[0] == 3 && rev[2] == 1, "reversed");
        check(Natives.sum(1L, 2L, 3L, 4L) == 10L, "sum varargs"); called("Natives.sum");
        check(Natives.sum() == 0L, "sum empty"); called("Natives.sum");
        check(n.lockedIncrement() == 1, "synchronized wrapper holds the monitor"); called("Natives.lockedIncrement");
        try {
            Natives.fail("boom");
            check(false, "fail must throw");
        } catch (java.io.IOException e) {
            check(e.getMessage().equals("boom"), "exception message");
        }
        called("Natives.fail");
        try {
            Natives.fail(null);
            check(false, "fail(null) must throw");
        } catch (NullPointerException e) {
            // thrown by the C code's own check
        }
        called("Natives.fail");
        check(Natives.callback(10) == 23, "callback"); called("Natives.callback"); called("Natives.add");
        Natives.nothing(); called("Natives.nothing");
        Object o = new Object();
        check(Natives.identity(o) == o, "identity"); called("Natives.identity");
        check(Natives.identity(null) == null, "identity null"); called("Natives.identity");
        check(Natives.half(3.0f) == 1.5f, "half"); called("Natives.half");
        check(Natives.upper('q') == 'Q', "upper"); called("Natives.upper");
        check(Natives.neg((short) 12) == (short) -12, "neg"); called("Natives.neg");
        check(Natives.inc((byte) 41) == (byte) 42, "inc"); called("Natives.inc");
        check(Natives.flip(true) == false, "flip"); called("Natives.flip");
        double[][] grid = Natives.grid(3); called("Natives.grid");
        check(grid.length == 3 && grid[2][1] == 21.0, "grid");
        check(Natives.wide(WIDE_ARGS) == wideExpected(), "wide static (250 slots)"); called("Natives.wide");
        check(n.wideInstance(WIDE_INSTANCE_ARGS) == wideInstanceExpected(7), "wide instance (255 slots)");
        called("Natives.wideInstance");
        check(OldNatives.twice(21) == 42, "old twice"); called("OldNatives.twice");
        check(new OldNatives().plus(10L) == 15L, "old plus"); called("OldNatives.plus");

        Thread[] threads = new Thread[4];
        for (int t = 0; t < threads.length; t++) {
            final int base = t * 1000;
            threads[t] = new Thread(() -> {
                for (int i = 0; i < 2500; i++) {
                    check(Natives.add(base, i) == base + i, "threaded add");
                    called("Natives.add");
                }
            });
            threads[t].start();
        }
        for (Thread t : threads) t.join();
        result("all checks passed");

        if (mode.equals("gate")) setGate(false);
        int total = 0;
        for (Map.Entry<String, Integer> e : expected.entrySet()) {
            System.out.println("expect " + e.getKey() + " " + e.getValue());
            total += e.getValue();
        }
        System.out.println("calls " + total);
        if (mode.equals("counter")) {
            System.out.println("counter " + Counter.totalBegins + " " + Counter.totalEnds + " " + Counter.depth
                    + " " + Counter.maxDepth);
            for (int id = 0; id < Counter.MAX_IDS; id++) {
                if (Counter.begins[id] != 0 || Counter.ends[id] != 0) {
                    System.out.println("seen " + id + " " + Counter.begins[id] + " " + Counter.ends[id]);
                }
            }
        }
        if (mode.equals("gate")) {
            System.out.println("gate " + GateProbe.begins() + " " + GateProbe.ends());
        }
    }
