package compat;

/**
 * JNI misuse whose behaviour must not change under the agent: upcalls with an exception pending, and
 * upcalls with a null method ID. Prints what happened on stdout. Usage: Pending CASE, CASE one of
 * pending | after-java-throw | null-static | null-static-v | null-static-a | null-virtual |
 * null-nonvirtual | null-new-object
 */
public final class Pending {
    static {
        Native.ensureLoaded();
    }

    static native int callWithPending();

    static native int callAfterJavaThrow(Pending receiver);

    static native int callNullMethodId(Pending receiver, int style);

    static int probe(int x) {
        System.out.println("probe(" + x + ") ran");
        return x + 40;
    }

    int instanceProbe(int x) {
        System.out.println("instanceProbe(" + x + ") ran");
        return x + 50;
    }

    Pending() {
        System.out.println("constructor ran");
    }

    static void thrower() {
        throw new UnsupportedOperationException("thrown by Java thrower");
    }

    public static void main(String[] args) {
        String which = args[0];
        Pending receiver = new Pending();
        System.out.println("case " + which);
        System.out.flush();
        try {
            int result;
            switch (which) {
                case "pending": result = callWithPending(); break;
                case "after-java-throw": result = callAfterJavaThrow(receiver); break;
                case "null-static": result = callNullMethodId(receiver, 0); break;
                case "null-static-v": result = callNullMethodId(receiver, 1); break;
                case "null-static-a": result = callNullMethodId(receiver, 2); break;
                case "null-virtual": result = callNullMethodId(receiver, 3); break;
                case "null-nonvirtual": result = callNullMethodId(receiver, 4); break;
                case "null-new-object": result = callNullMethodId(receiver, 5); break;
                default: throw new IllegalArgumentException("unknown case " + which);
            }
            System.out.println("returned " + result);
        } catch (Throwable t) {
            System.out.println("threw " + t);
            Throwable suppressed = t.getCause();
            if (suppressed != null) System.out.println("cause " + suppressed);
        }
        System.out.println("end");
    }
}
