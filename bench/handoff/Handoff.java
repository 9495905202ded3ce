import java.lang.management.ManagementFactory;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32;

/**
 * Two threads hand a token back and forth with LockSupport.park/unpark, each turn one small native
 * call (CRC32.update of 16 bytes): every turn blocks one thread and wakes the other, the pattern of
 * request queues, thread pools and producer/consumer pipelines. Prints the process CPU time per
 * round (both threads' turns) after a warm-up:
 *   cpu_per_round_ns NS
 *
 * Usage: java Handoff ROUNDS
 */
public class Handoff {
    static volatile int turn = 0;

    static void play(int me, int rounds, Thread[] players) {
        CRC32 crc = new CRC32();
        byte[] bytes = new byte[16];
        for (int i = 0; i < rounds; i++) {
            while (turn != me) LockSupport.park();
            crc.update(bytes, 0, bytes.length);
            turn = 1 - me;
            LockSupport.unpark(players[1 - me]);
        }
    }

    static long run(int rounds) throws InterruptedException {
        Thread[] players = new Thread[2];
        for (int k = 0; k < 2; k++) {
            final int me = k;
            players[k] = new Thread(() -> play(me, rounds, players), "player-" + k);
        }
        turn = 0;
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long before = os.getProcessCpuTime();
        for (Thread t : players) t.start();
        for (Thread t : players) t.join();
        return os.getProcessCpuTime() - before;
    }

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        run(Math.max(1, rounds / 10));
        System.out.printf("cpu_per_round_ns %.0f%n", run(rounds) / (double) rounds);
    }
}
