package compat;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntUnaryOperator;

/**
 * Burns CPU time in every part of the agent's process accounting and measures each part itself
 * (issue 14). Usage:
 * <ul>
 *   <li>{@code ProcessCpu work MS}: four Java threads (allocation for the GC, freshly generated code
 *       for the JIT, JNI natives, plain bytecode) and a pthread that never attaches, each burning
 *       about MS ms of its own CPU time;
 *   <li>{@code ProcessCpu attached}: a pthread that spins, attaches, runs Java, spins attached,
 *       detaches and spins again; and a native thread and a Java thread that end before the VM;
 *   <li>{@code ProcessCpu compilers MS IDLE_MS}: a burst of compilation for MS ms on two threads,
 *       then idle until HotSpot has stopped one of the compiler threads it added (at most IDLE_MS
 *       ms) and 300 ms more, watching the compiler threads' CPU time all along.
 * </ul>
 * It prints {@code RESULT {json}} with its own measurements: the CPU time each thread measured for
 * itself, what the natives measured with CLOCK_THREAD_CPUTIME_ID, the VM's own list of its internal
 * threads with their CPU time (sun.management, needs --add-exports
 * java.management/sun.management=ALL-UNNAMED), every OS thread's name and CPU clock, and the
 * process's user+system time from /proc/self/stat.
 */
public final class ProcessCpu {
    static {
        Native.ensureLoaded();
    }

    private ProcessCpu() {}

    static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /** Spins in C until the calling thread's CPU clock advanced by `nanos`; returns the advance. */
    static native long spinNative(long nanos);

    /** CPU time of thread `tid` of this process, from its kernel clock; -1 once it has ended. */
    static native long threadCpu(int tid);

    /** Starts a pthread in `slot` (see compat_natives.c); exitAfterMs < 0: it blocks for good. */
    static native boolean startThread(
            int slot, boolean attach, long before, long java, long attachedNative, long after, long exitAfterMs);

    /** Waits for the pthread in `slot` to finish its work: {tid, CPU clock at its 7 marks}. */
    static native long[] awaitThread(int slot);

    /** Starts `count` pthreads, `parallel` at a time, each spinning `nanos`; the sum of their own
     * measures (see compat_natives.c). */
    static native long shortThreads(int count, long nanos, int parallel);

    /** One pthread that spins `nanos` and ends at once: {tid, its own CPU measure}. */
    static native long[] spinnerThread(long nanos);

    static volatile long sink;

    static long cpu() {
        return THREADS.getCurrentThreadCpuTime();
    }

    /** Bytecode until the thread's CPU time advanced by `nanos`; called from C by the attached thread. */
    static long javaSpin(long nanos) {
        long start = cpu();
        long x = start;
        long now;
        do {
            for (int i = 0; i < 2_000_000; i++) x = x * 6364136223846793005L + 1442695040888963407L;
            now = cpu();
        } while (now - start < nanos);
        sink += x;
        return now - start;
    }

    /** Allocates hard, keeping a churning set of arrays alive, until `nanos` of CPU time. */
    static void allocate(long nanos) {
        long start = cpu();
        Object[] ring = new Object[4_000];
        Random random = new Random(1);
        long n = 0;
        while (cpu() - start < nanos) {
            for (int i = 0; i < 10_000; i++) {
                ring[random.nextInt(ring.length)] = new byte[64 + random.nextInt(2000)];
                if ((i & 15) == 0) ring[random.nextInt(ring.length)] = new ArrayList<>(List.of(i, n));
            }
            n++;
        }
        sink += n;
    }

    /** Defines new classes and calls each until the JIT compiles it, until `nanos` of CPU time. */
    static void coldCode(long nanos) {
        long start = cpu();
        int index = 0;
        while (cpu() - start < nanos) {
            try {
                sink += runGenerated(index++);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    static long runGenerated(int index) throws ReflectiveOperationException {
        String name = "compat/Gen" + index;
        byte[] bytes = generateClass(name, new Random(index), 200);
        Class<?> cls = new ClassLoader(ProcessCpu.class.getClassLoader()) {
            Class<?> define() {
                return defineClass(name.replace('/', '.'), bytes, 0, bytes.length);
            }
        }.define();
        IntUnaryOperator f = (IntUnaryOperator) cls.getDeclaredConstructor().newInstance();
        long sum = 0;
        for (int i = 0; i < 12_000; i++) sum += f.applyAsInt(i);
        return sum;
    }

    /**
     * A class file (version 49, so no stack maps are needed) that implements IntUnaryOperator:
     * {@code applyAsInt(x)} runs `blocks` blocks of the form {@code if ((x & A) != 0) x = x * B;
     * x = x ^ C; x += D} with random constants, then returns x. Every class is new code for the JIT.
     */
    static byte[] generateClass(String name, Random random, int blocks) {
        ByteArrayOutputStream codeBytes = new ByteArrayOutputStream();
        for (int b = 0; b < blocks; b++) {
            int[] k = {random.nextInt(30000) + 1, random.nextInt(30000) + 1, random.nextInt(30000), random.nextInt(30000)};
            // iload_1; sipush A; iand; ifeq +9 (over: iload_1; sipush B; imul; istore_1)
            emit(codeBytes, 0x1b, 0x11, k[0] >> 8, k[0], 0x7e, 0x99, 0, 9, 0x1b, 0x11, k[1] >> 8, k[1], 0x68, 0x3c);
            // iload_1; sipush C; ixor; sipush D; iadd; istore_1
            emit(codeBytes, 0x1b, 0x11, k[2] >> 8, k[2], 0x82, 0x11, k[3] >> 8, k[3], 0x60, 0x3c);
        }
        emit(codeBytes, 0x1b, 0xac); // iload_1; ireturn
        byte[] code = codeBytes.toByteArray();
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeInt(0xCAFEBABE);
            out.writeShort(0);
            out.writeShort(49);
            out.writeShort(14); // constant pool count: 13 entries
            utf8(out, name); // #1
            out.writeByte(7); // #2 Class #1
            out.writeShort(1);
            utf8(out, "java/lang/Object"); // #3
            out.writeByte(7); // #4 Class #3
            out.writeShort(3);
            utf8(out, "applyAsInt"); // #5
            utf8(out, "(I)I"); // #6
            utf8(out, "Code"); // #7
            utf8(out, "<init>"); // #8
            utf8(out, "()V"); // #9
            out.writeByte(12); // #10 NameAndType #8 #9
            out.writeShort(8);
            out.writeShort(9);
            out.writeByte(10); // #11 Methodref #4 #10
            out.writeShort(4);
            out.writeShort(10);
            utf8(out, "java/util/function/IntUnaryOperator"); // #12
            out.writeByte(7); // #13 Class #12
            out.writeShort(12);
            out.writeShort(0x21); // public super
            out.writeShort(2);
            out.writeShort(4);
            out.writeShort(1); // interfaces
            out.writeShort(13);
            out.writeShort(0); // fields
            out.writeShort(2); // methods
            // public <init>()V { aload_0; invokespecial Object.<init>; return }
            method(out, 0x01, 8, 9, 1, 1, new byte[] {0x2a, (byte) 0xb7, 0, 11, (byte) 0xb1});
            method(out, 0x01, 5, 6, 2, 2, code);
            out.writeShort(0); // class attributes
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static void method(DataOutputStream out, int access, int name, int descriptor, int maxStack, int maxLocals, byte[] code)
            throws IOException {
        out.writeShort(access);
        out.writeShort(name);
        out.writeShort(descriptor);
        out.writeShort(1); // attributes: Code (constant #7)
        out.writeShort(7);
        out.writeInt(12 + code.length);
        out.writeShort(maxStack);
        out.writeShort(maxLocals);
        out.writeInt(code.length);
        out.write(code);
        out.writeShort(0); // exception table
        out.writeShort(0); // code attributes
    }

    static void emit(ByteArrayOutputStream out, int... bytes) {
        for (int b : bytes) out.write(b & 0xff);
    }

    static void utf8(DataOutputStream out, String s) throws IOException {
        out.writeByte(1);
        out.writeUTF(s);
    }

    /** A worker that runs `body`, then records its own CPU time under its name. */
    static Thread worker(String name, Runnable body, Map<String, Long> cpu) {
        return new Thread(() -> {
            body.run();
            long own = cpu();
            synchronized (cpu) {
                cpu.put(name, own);
            }
        }, name);
    }

    public static void main(String[] args) throws Exception {
        long main0 = cpu();
        StringBuilder result = new StringBuilder();
        switch (args[0]) {
            case "work":
                work(Long.parseLong(args[1]) * 1_000_000L, result);
                break;
            case "attached":
                attached(result);
                break;
            case "short":
                shortLived(Integer.parseInt(args[1]), Long.parseLong(args[2]) * 1_000_000L,
                        Integer.parseInt(args[3]), result);
                break;
            case "compilers":
                compilers(Long.parseLong(args[1]) * 1_000_000L, Long.parseLong(args[2]), result);
                break;
            default:
                throw new IllegalArgumentException(args[0]);
        }
        result.append(",\"main_cpu_at_start\":").append(main0);
        result.append(",\"main_cpu_since_start\":").append(cpu() - main0);
        measureProcess(result);
        Native.printResult(result.toString());
    }

    static void work(long nanos, StringBuilder result) throws Exception {
        Map<String, Long> own = new TreeMap<>();
        AtomicLong jniMeasured = new AtomicLong();
        startThread(0, false, nanos, 0, 0, 0, -1);
        Thread[] workers = {
            worker("process-alloc", () -> allocate(nanos), own),
            worker("process-jit", () -> coldCode(nanos), own),
            worker("process-jni", () -> {
                long done = 0;
                while (done < nanos) {
                    done += spinNative(20_000_000L);
                    Native.countNative("compat/ProcessCpu", "spinNative", "(J)J", 1);
                }
                jniMeasured.set(done);
            }, own),
            worker("process-bytecode", () -> javaSpin(nanos), own),
        };
        for (Thread t : workers) t.start();
        for (Thread t : workers) t.join();
        long[] pthread = awaitThread(0);
        result.append("\"java_threads_cpu\":");
        appendMap(result, own);
        result.append(",\"jni_native_measured\":").append(jniMeasured.get());
        result.append(",\"native_thread\":");
        appendArray(result, pthread);
    }

    static void attached(StringBuilder result) throws Exception {
        Map<String, Long> own = new TreeMap<>();
        // Spins 300 ms, attaches, 200 ms of Java, 150 ms native while attached, detaches, 250 ms.
        startThread(0, true, 300_000_000L, 200_000_000L, 150_000_000L, 250_000_000L, -1);
        // The same story with no spin before attaching: no scan sees it before its context opens.
        startThread(1, true, 0, 100_000_000L, 50_000_000L, 100_000_000L, -1);
        // A native thread that spins 400 ms and ends 400 ms later; a Java thread that ends.
        startThread(2, false, 400_000_000L, 0, 0, 0, 400);
        Thread ending = worker("process-ending", () -> javaSpin(300_000_000L), own);
        ending.start();
        ending.join();
        result.append("\"java_threads_cpu\":");
        appendMap(result, own);
        for (int slot = 0; slot < 3; slot++) {
            result.append(",\"thread").append(slot).append("\":");
            appendArray(result, awaitThread(slot));
        }
        // Let the native thread of slot 2 end and the scan notice.
        Thread.sleep(800);
        result.append(",\"thread2_cpu_after_exit\":").append(threadCpu((int) awaitThread(2)[0]));
    }

    /** Native threads that all end long before the VM: `count` short ones, `parallel` at a time,
     * then one 400 ms spinner that ends at once. */
    static void shortLived(int count, long nanos, int parallel, StringBuilder result) throws Exception {
        long sum = shortThreads(count, nanos, parallel);
        long[] spinner = spinnerThread(400_000_000L);
        result.append("\"short_threads_cpu\":").append(sum);
        result.append(",\"spinner\":");
        appendArray(result, spinner);
        Thread.sleep(500);
    }

    static void compilers(long nanos, long idleMs, StringBuilder result) throws Exception {
        // Per compiler thread name: the CPU time of its current thread, and of the earlier threads
        // that had the name (a name whose CPU time goes down belongs to a new thread).
        Map<String, Long> current = new TreeMap<>();
        Map<String, Long> earlier = new TreeMap<>();
        Map<String, Long> own = new TreeMap<>();
        Thread[] workers = {
            worker("process-jit-0", () -> coldCode(nanos), own),
            worker("process-jit-1", () -> coldCode(nanos), own),
        };
        for (Thread t : workers) t.start();
        // After the burst: idle until HotSpot has stopped a compiler thread (at most IDLE_MS), then
        // 300 ms more.
        long deadline = -1;
        long stopAfterGone = -1;
        while (true) {
            boolean busy = false;
            for (Thread t : workers) busy |= t.isAlive();
            long now = System.nanoTime();
            if (!busy && deadline < 0) deadline = now + idleMs * 1_000_000L;
            if (deadline >= 0 && (now > deadline || (stopAfterGone >= 0 && now > stopAfterGone))) break;
            Map<String, Long> threads = internalThreads();
            for (Map.Entry<String, Long> e : threads.entrySet()) {
                if (!e.getKey().contains("CompilerThread")) continue;
                Long last = current.put(e.getKey(), e.getValue());
                if (last != null && last > e.getValue()) earlier.merge(e.getKey(), last, Long::sum);
            }
            if (!busy && stopAfterGone < 0 && !threads.keySet().containsAll(current.keySet())) {
                stopAfterGone = now + 300_000_000L;
            }
            Thread.sleep(10);
        }
        Map<String, Long> seen = new TreeMap<>(current);
        earlier.forEach((k, v) -> seen.merge(k, v, Long::sum));
        result.append("\"compiler_threads_seen\":");
        appendMap(result, seen);
        result.append(",\"compiler_names_reused\":").append(earlier.size());
        result.append(",\"java_threads_cpu\":");
        appendMap(result, own);
    }

    /** The VM's own list of its internal threads (JIT, GC, VM thread, ...) with their CPU time. */
    @SuppressWarnings("unchecked")
    static Map<String, Long> internalThreads() {
        try {
            Object bean = Class.forName("sun.management.ManagementFactoryHelper")
                    .getMethod("getHotspotThreadMBean")
                    .invoke(null);
            return (Map<String, Long>) Class.forName("sun.management.HotspotThreadMBean")
                    .getMethod("getInternalThreadCpuTimes")
                    .invoke(bean);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return new TreeMap<>();
        }
    }

    /** Every OS thread (name, CPU clock), the VM's internal threads, and the process's user+system time. */
    static void measureProcess(StringBuilder result) throws IOException {
        StringBuilder tasks = new StringBuilder("[");
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(Paths.get("/proc/self/task"))) {
            for (Path task : dir) {
                int tid = Integer.parseInt(task.getFileName().toString());
                String comm;
                try {
                    comm = new String(Files.readAllBytes(task.resolve("comm"))).trim();
                } catch (IOException e) {
                    continue;
                }
                long cpu = threadCpu(tid);
                if (cpu < 0) continue;
                if (tasks.length() > 1) tasks.append(',');
                tasks.append("{\"tid\":").append(tid).append(",\"comm\":\"")
                        .append(comm.replace("\\", "\\\\").replace("\"", "\\\"")).append("\",\"cpu\":").append(cpu).append('}');
            }
        }
        result.append(",\"tasks\":").append(tasks).append(']');
        result.append(",\"internal_threads\":");
        appendMap(result, new TreeMap<>(internalThreads()));
        // utime and stime are fields 14 and 15, counted after the ")" that ends the command name.
        String stat = new String(Files.readAllBytes(Paths.get("/proc/self/stat")));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
        result.append(",\"proc_stat_cpu_ns\":").append(ticks * 10_000_000L);
        result.append(",\"pid\":").append(ProcessHandle.current().pid());
    }

    static void appendMap(StringBuilder out, Map<String, Long> map) {
        out.append('{');
        boolean first = true;
        for (Map.Entry<String, Long> e : map.entrySet()) {
            if (!first) out.append(',');
            first = false;
            out.append('"').append(e.getKey().replace("\\", "\\\\").replace("\"", "\\\"")).append("\":").append(e.getValue());
        }
        out.append('}');
    }

    static void appendArray(StringBuilder out, long[] values) {
        out.append('[');
        for (int i = 0; i < values.length; i++) {
            if (i > 0) out.append(',');
            out.append(values[i]);
        }
        out.append(']');
    }
}
