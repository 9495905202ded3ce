/** Compiled with --release 8 and then patched to class-file version 49 (no StackMapTable path). */
public class OldNatives {
    long base = 5;
    static native int twice(int x);
    native long plus(long x);
}
