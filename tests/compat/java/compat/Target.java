package compat;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Upcall targets of the 93-function battery. Every method checks its arguments (so a wrapper that
 * forwards them wrongly is caught) and returns a value that libcompat checks in turn.
 */
public class Target {
    public static final Object MARKER = new Object();
    static final AtomicLong ERRORS = new AtomicLong();

    final int made;

    public Target() {
        made = -1;
    }

    public Target(int a, long b, double c, Object d) {
        check(a, b, c, d);
        made = a;
    }

    static void check(int a, long b, double c, Object d) {
        if (b != a * 3L + (1L << 40) || c != a * 0.5 || d != MARKER) ERRORS.incrementAndGet();
    }

    public Object vL(int a, long b, double c, Object d) { check(a, b, c, d); return d; }
    public boolean vZ(int a, long b, double c, Object d) { check(a, b, c, d); return (a & 1) == 0; }
    public byte vB(int a, long b, double c, Object d) { check(a, b, c, d); return (byte) (a + 1); }
    public char vC(int a, long b, double c, Object d) { check(a, b, c, d); return (char) (a + 2); }
    public short vS(int a, long b, double c, Object d) { check(a, b, c, d); return (short) (a + 3); }
    public int vI(int a, long b, double c, Object d) { check(a, b, c, d); return a + 4; }
    public long vJ(int a, long b, double c, Object d) { check(a, b, c, d); return b + 5; }
    public float vF(int a, long b, double c, Object d) { check(a, b, c, d); return (float) (c + 6); }
    public double vD(int a, long b, double c, Object d) { check(a, b, c, d); return c + 7; }
    public void vV(int a, long b, double c, Object d) { check(a, b, c, d); }

    public static Object sL(int a, long b, double c, Object d) { check(a, b, c, d); return d; }
    public static boolean sZ(int a, long b, double c, Object d) { check(a, b, c, d); return (a & 1) == 0; }
    public static byte sB(int a, long b, double c, Object d) { check(a, b, c, d); return (byte) (a + 1); }
    public static char sC(int a, long b, double c, Object d) { check(a, b, c, d); return (char) (a + 2); }
    public static short sS(int a, long b, double c, Object d) { check(a, b, c, d); return (short) (a + 3); }
    public static int sI(int a, long b, double c, Object d) { check(a, b, c, d); return a + 4; }
    public static long sJ(int a, long b, double c, Object d) { check(a, b, c, d); return b + 5; }
    public static float sF(int a, long b, double c, Object d) { check(a, b, c, d); return (float) (c + 6); }
    public static double sD(int a, long b, double c, Object d) { check(a, b, c, d); return c + 7; }
    public static void sV(int a, long b, double c, Object d) { check(a, b, c, d); }
}
