/** Reads the counters of the C implementations of Gate.j2n$beginN / j2n$endN (excluded from wrapping). */
public class GateProbe {
    static native long begins();
    static native long ends();
}
