import java.util.Arrays;

/** Prints whether the rewritten java.base is the one in use (run with --patch-module only). */
public class Probe {
    public static void main(String[] args) throws Exception {
        boolean helpers = Arrays.stream(Object.class.getDeclaredMethods())
                .anyMatch(m -> m.getName().equals("j2n$begin"));
        boolean renamed = Arrays.stream(java.io.FileInputStream.class.getDeclaredMethods())
                .anyMatch(m -> m.getName().equals("$nativeacct$readBytes"));
        boolean visible = Arrays.stream(String.class.getMethods()).anyMatch(m -> m.getName().startsWith("j2n$"));
        System.out.println("helpers " + helpers + " renamed " + renamed + " inherited-public " + visible);
    }
}
