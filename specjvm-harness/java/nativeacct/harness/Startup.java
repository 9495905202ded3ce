package nativeacct.harness;

/**
 * startup: an empty program. The harness runs it to show the fixed cost of starting a JVM in each
 * configuration (with the agent every loaded class passes through the class-file hook and CDS is off).
 */
public final class Startup {
    public static void main(String[] args) {
        long t0 = Common.start();
        System.out.println("startup: hello");
        Common.finish("startup", t0);
    }
}
