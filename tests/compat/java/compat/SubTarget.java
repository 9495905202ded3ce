package compat;

/** Virtual calls reach these overrides; nonvirtual calls must not. */
class SubTarget extends Target {
    @Override public Object vL(int a, long b, double c, Object d) { check(a, b, c, d); return this; }
    @Override public boolean vZ(int a, long b, double c, Object d) { check(a, b, c, d); return ((a + 1) & 1) == 0; }
    @Override public byte vB(int a, long b, double c, Object d) { check(a, b, c, d); return (byte) (a + 101); }
    @Override public char vC(int a, long b, double c, Object d) { check(a, b, c, d); return (char) (a + 102); }
    @Override public short vS(int a, long b, double c, Object d) { check(a, b, c, d); return (short) (a + 103); }
    @Override public int vI(int a, long b, double c, Object d) { check(a, b, c, d); return a + 104; }
    @Override public long vJ(int a, long b, double c, Object d) { check(a, b, c, d); return b + 105; }
    @Override public float vF(int a, long b, double c, Object d) { check(a, b, c, d); return (float) (c + 106); }
    @Override public double vD(int a, long b, double c, Object d) { check(a, b, c, d); return c + 107; }
    @Override public void vV(int a, long b, double c, Object d) { check(a, b, c, d); }
}
