import java.io.*;
import java.nio.file.*;
import java.util.*;
import java.util.concurrent.*;
import java.util.zip.*;

/** Deterministic workload over files, zip and threads; its output must not change under patching. */
public class Workload {
    public static void main(String[] args) throws Exception {
        Path dir = Files.createTempDirectory("nativeacct-workload");
        try {
            files(dir);
            zip(dir);
            threads();
            monitors();
        } finally {
            try (var paths = Files.walk(dir)) {
                paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        System.out.println("done");
    }

    static void files(Path dir) throws IOException {
        Path text = dir.resolve("a.txt");
        Files.writeString(text, "line one\nline two\n");
        System.out.println("lines " + Files.readAllLines(text));
        try (RandomAccessFile raf = new RandomAccessFile(dir.resolve("b.bin").toFile(), "rw")) {
            for (int i = 0; i < 1000; i++) raf.writeInt(i * 7);
            raf.seek(4 * 500);
            System.out.println("raf " + raf.readInt() + " length " + raf.length());
        }
        try (FileInputStream in = new FileInputStream(text.toFile())) {
            byte[] buf = new byte[4];
            System.out.println("read " + in.read(buf) + " " + new String(buf, "UTF-8") + " avail " + in.available());
        }
        File[] listed = dir.toFile().listFiles();
        Arrays.sort(listed);
        for (File f : listed) System.out.println("file " + f.getName() + " " + f.length() + " " + f.isFile());
        System.out.println("canonical ok " + dir.toFile().getCanonicalFile().exists());
    }

    static void zip(Path dir) throws IOException {
        Path archive = dir.resolve("z.zip");
        try (ZipOutputStream out = new ZipOutputStream(Files.newOutputStream(archive))) {
            for (int i = 0; i < 5; i++) {
                out.putNextEntry(new ZipEntry("entry" + i + ".txt"));
                out.write(("content " + i + " ").repeat(100 * (i + 1)).getBytes("UTF-8"));
                out.closeEntry();
            }
        }
        try (ZipFile zf = new ZipFile(archive.toFile())) {
            List<String> names = new ArrayList<>();
            zf.stream().forEach(e -> names.add(e.getName() + ":" + e.getSize() + ":" + Long.toHexString(e.getCrc())));
            System.out.println("zip " + names);
            try (InputStream in = zf.getInputStream(zf.getEntry("entry3.txt"))) {
                System.out.println("zip entry3 bytes " + in.readAllBytes().length);
            }
        }
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (GZIPOutputStream out = new GZIPOutputStream(gz)) {
            out.write("gzip me ".repeat(500).getBytes("UTF-8"));
        }
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(gz.toByteArray()))) {
            System.out.println("gunzip " + in.readAllBytes().length);
        }
        Adler32 adler = new Adler32();
        adler.update("adler".getBytes("UTF-8"));
        System.out.println("adler " + Long.toHexString(adler.getValue()));
        Deflater deflater = new Deflater();
        deflater.setInput(new byte[10000]);
        deflater.finish();
        byte[] packed = new byte[10000];
        int packedLength = deflater.deflate(packed);
        deflater.end();
        Inflater inflater = new Inflater();
        inflater.setInput(packed, 0, packedLength);
        byte[] unpacked = new byte[20000];
        try {
            System.out.println("inflate " + inflater.inflate(unpacked));
        } catch (DataFormatException e) {
            throw new IOException(e);
        }
        inflater.end();
    }

    static void threads() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<Long>> futures = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            final int seed = t;
            futures.add(pool.submit(() -> {
                long sum = 0;
                for (int i = 0; i < 100000; i++) sum += (i ^ seed) % 7;
                Thread.sleep(5);
                Thread.yield();
                return sum;
            }));
        }
        long total = 0;
        for (Future<Long> f : futures) total += f.get();
        pool.shutdown();
        System.out.println("threads " + total + " terminated " + pool.awaitTermination(10, TimeUnit.SECONDS));
    }

    static void monitors() throws Exception {
        final Object lock = new Object();
        final int[] box = new int[1];
        Thread waiter = new Thread(() -> {
            synchronized (lock) {
                while (box[0] == 0) {
                    try {
                        lock.wait(1000);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                box[0]++;
            }
        });
        waiter.start();
        Thread.sleep(20);
        synchronized (lock) {
            box[0] = 1;
            lock.notifyAll();
        }
        waiter.join();
        System.out.println("monitor " + box[0] + " alive " + waiter.isAlive());
    }
}
