/** Natives of every descriptor shape the wrapper must handle; implemented in natives.c. */
public class Natives {
    static {
        System.loadLibrary("testnatives");
    }

    int base;

    Natives(int base) {
        this.base = base;
    }

    boolean holdsLock() {
        return Thread.holdsLock(this);
    }

    static int up(int n) {
        return add(n, 1) * 2;
    }

    static native int add(int a, int b);
    native long scale(long x, int k);
    static native double mix(double d, float f, long l, int i);
    static native int packSmall(byte b, char c, short s, boolean z);
    static native String join(String a, String b);
    static native int[] reversed(int[] xs);
    static native long sum(long... xs);
    synchronized native int lockedIncrement();
    static native void fail(String message) throws java.io.IOException;
    static native int callback(int n);
    static native void nothing();
    static native Object identity(Object o);
    static native float half(float f);
    static native char upper(char c);
    static native short neg(short s);
    static native byte inc(byte b);
    static native boolean flip(boolean z);
    static native double[][] grid(int n);
    /*WIDE*/
}
