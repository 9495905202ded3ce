import java.lang.reflect.Method;
import java.util.Arrays;

/**
 * What a program sees of itself: stack traces through natives, StackWalker frames, reflection, and
 * arguments and results of every type passed through natives. Its stdout must be the same with and
 * without the agent. Mode "count N" calls the counted natives N times each; mode "framewalk" prints
 * what a frame-pointer walk from inside a native finds.
 */
public class Transparency {
    static {
        System.loadLibrary("transparency");
    }

    static native void callBack(Runnable r);

    static native void throwFromNative(String message);

    static native double mixed20(int a, long b, float c, double d, Object e, int f, long g, float h,
            double i, String j, int k, long l, float m, double n, byte o, short p, char q, boolean r,
            float s, double t);

    native float instanceFloat(float x, double y);

    static native Object identity(Object o);

    static native boolean not(boolean b);

    static native int add(int a, int b);

    /** Bound by RegisterNatives to one C function shared by both (registerShared). */
    static native int sharedA(int x);

    static native int sharedB(int x);

    /** Bound by RegisterNatives to one C function, then re-bound to another (rebind). */
    static native int rebound(int x);

    /** RegisterNatives for sharedA, sharedB and rebound (its first target). */
    static native void registerShared();

    /** RegisterNatives again for rebound, to its second target. */
    static native void rebind();

    /** Frames from the native's own frame to the first return address outside every library. */
    static native int framesToJava();

    /** The library that holds the return address `depth` frames up, or "" for none. */
    static native String libraryAt(int depth);

    static double mixed20InJava(int a, long b, float c, double d, Object e, int f, long g, float h,
            double i, String j, int k, long l, float m, double n, byte o, short p, char q, boolean r,
            float s, double t) {
        double sum = 0;
        double[] values = {a, b, c, d, e == null ? 0 : 1, f, g, h, i, j.length(), k, l, m, n, o, p, q,
                r ? 1 : 0, s, t};
        for (int idx = 0; idx < values.length; idx++) {
            sum += (idx + 1) * values[idx];
        }
        return sum;
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length == 0 ? "show" : args[0];
        if (mode.equals("count")) {
            count(Integer.parseInt(args[1]));
        } else if (mode.equals("registered")) {
            registered(Integer.parseInt(args[1]));
        } else if (mode.equals("framewalk")) {
            int depth = framesToJava();
            System.out.println("frames to Java: " + depth);
            for (int d = 0; d < depth; d++) {
                System.out.println("frame " + d + ": " + libraryAt(d));
            }
        } else {
            show();
        }
    }

    static void count(int n) {
        int sum = 0;
        boolean b = false;
        for (int i = 0; i < n; i++) {
            sum += add(i, 1);
            b = not(b);
        }
        System.out.println("count " + n + " sum " + sum + " last " + b);
    }

    /** n calls of each shared native, then n calls of rebound before and n after its re-bind. */
    static void registered(int n) {
        registerShared();
        long a = 0, b = 0, before = 0, after = 0;
        for (int i = 0; i < n; i++) {
            a += sharedA(1);
            b += sharedB(2);
            before += rebound(i);
        }
        rebind();
        for (int i = 0; i < n; i++) {
            after += rebound(i);
        }
        System.out.println("registered " + n + " sharedA " + a + " sharedB " + b + " rebound before " + before
                + " after " + after);
    }

    static void show() throws Exception {
        callBack(() -> {
            new Throwable("trace from a callback").printStackTrace(System.out);
            StackWalker.getInstance().forEach(f -> System.out.println("walker: " + f));
        });
        try {
            throwFromNative("thrown in C");
        } catch (IllegalStateException e) {
            e.printStackTrace(System.out);
        }
        for (Class<?> c : new Class<?>[] {Transparency.class, Object.class, Thread.class,
                java.util.zip.Deflater.class}) {
            Arrays.stream(c.getDeclaredMethods()).map(Method::toString).sorted()
                    .forEach(m -> System.out.println(c.getSimpleName() + ": " + m));
        }
        double nat = mixed20(1, 2L << 40, 3.5f, 4.25, "x", -6, -(7L << 33), 8.5f, 9.125, "ten!", 11,
                12L, 13.75f, 14.5, (byte) -15, (short) 16, 'q', true, -19.5f, 20.0625);
        double java = mixed20InJava(1, 2L << 40, 3.5f, 4.25, "x", -6, -(7L << 33), 8.5f, 9.125, "ten!",
                11, 12L, 13.75f, 14.5, (byte) -15, (short) 16, 'q', true, -19.5f, 20.0625);
        System.out.println("mixed20 native " + nat + " java " + java + " agree " + (nat == java));
        System.out.println("wide " + Wide.check());
        System.out.println("instanceFloat " + new Transparency().instanceFloat(1.5f, 2.25));
        Object o = new Object();
        System.out.println("identity " + (identity(o) == o) + " null " + (identity(null) == null));
        System.out.println("not " + not(true) + " " + not(false));
    }
}
