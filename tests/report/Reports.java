/**
 * Fixture of the report-tools tests: natives reached through distinct Java call chains, on two
 * threads, plus JNI upcalls. Usage: java Reports CALLS ROUNDS. Each of the CALLS iterations makes, on
 * the main thread, hash(ROUNDS) via viaA, hash(ROUNDS) + mix(ROUNDS) via viaB → viaC, and callBack(4)
 * (4 upcalls to back); the "mixer" thread makes mix(ROUNDS) CALLS times. With a third argument
 * "extra", main also calls extra(ROUNDS) once per iteration (a native the other runs lack). At the
 * end, stderr gets "own hash=NS mix=NS": the CPU those natives' work took, as they measured it.
 */
public class Reports {
    static { System.loadLibrary("reports"); }

    static native long hash(int rounds);
    static native long mix(int rounds);
    static native int callBack(int n);
    static native long extra(int rounds);
    static native long ownNs(int which);

    static int back(int x) { return x + 1; }
    static long viaA(int rounds) { return hash(rounds); }
    static long viaB(int rounds) { return viaC(rounds); }
    static long viaC(int rounds) { return hash(rounds) + mix(rounds); }

    public static void main(String[] args) throws Exception {
        int calls = Integer.parseInt(args[0]);
        int rounds = Integer.parseInt(args[1]);
        boolean withExtra = args.length > 2 && args[2].equals("extra");
        long[] mixed = new long[1];
        Thread mixer = new Thread(() -> {
            for (int i = 0; i < calls; i++) mixed[0] += mix(rounds);
        }, "mixer");
        mixer.start();
        long sink = 0;
        for (int i = 0; i < calls; i++) {
            sink += viaA(rounds);
            sink += viaB(rounds);
            sink += callBack(4);
            if (withExtra) sink += extra(rounds);
        }
        mixer.join();
        System.err.println("own hash=" + ownNs(0) + " mix=" + ownNs(1));
        System.out.println("done " + (sink + mixed[0] > 0));
    }
}
