package nativeacct.harness;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.zip.Deflater;
import java.util.zip.Inflater;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * parallel: {@code --threads} workers (default 4) take jobs from a shared counter. Each job generates a text
 * chunk, hashes it (SHA-256), encrypts it (AES/CTR), deflates it, writes it to a temporary file, reads it
 * back, inflates and verifies it, and counts its words in a shared concurrent map. Results are combined in
 * job order, so the output does not depend on scheduling. {@code --size}: number of 256 KiB jobs.
 */
public final class Parallel {
    private static final int CHUNK = 256 * 1024;

    public static void main(String[] args) throws Exception {
        int jobs = Common.size(args, 64);
        int threads = Integer.parseInt(Common.option(args, "--threads", "4"));
        Path dir = Files.createTempDirectory("nativeacct-parallel");
        long[] jobDigests = new long[jobs];
        AtomicInteger next = new AtomicInteger();
        Map<String, LongAdder> words = new ConcurrentHashMap<>();
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        long t0 = Common.start();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> {
                try {
                    for (int job; (job = next.getAndIncrement()) < jobs; ) {
                        jobDigests[job] = runJob(job, dir, words);
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }, "parallel-worker-" + t);
            workers.add(worker);
            worker.start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException("worker failed", failures.get(0));
        }
        Common.finish("parallel", t0);
        long digest = 0;
        for (long d : jobDigests) {
            digest = Common.digest(digest, d);
        }
        long totalWords = words.values().stream().mapToLong(LongAdder::sum).sum();
        String top = words.entrySet().stream()
                .sorted((a, b) -> a.getValue().sum() != b.getValue().sum()
                        ? Long.compare(b.getValue().sum(), a.getValue().sum()) : a.getKey().compareTo(b.getKey()))
                .limit(3).map(e -> e.getKey() + "=" + e.getValue().sum()).reduce((a, b) -> a + "," + b).orElse("");
        System.out.println("parallel: " + threads + " threads, " + jobs + " jobs, " + words.size() + " distinct words, "
                + totalWords + " words, top " + top + ", digest " + Common.hex(digest));
        Files.deleteIfExists(dir);
    }

    static long runJob(int job, Path dir, Map<String, LongAdder> words) throws Exception {
        byte[] plain = Common.text(1000L + job, CHUNK);
        byte[] sha = MessageDigest.getInstance("SHA-256").digest(plain);

        Cipher aes = Cipher.getInstance("AES/CTR/NoPadding");
        SecretKeySpec key = new SecretKeySpec(java.util.Arrays.copyOf(sha, 16), "AES");
        IvParameterSpec iv = new IvParameterSpec(java.util.Arrays.copyOfRange(sha, 16, 32));
        aes.init(Cipher.ENCRYPT_MODE, key, iv);
        byte[] secret = aes.doFinal(plain);

        Deflater deflater = new Deflater(6);
        deflater.setInput(plain);
        deflater.finish();
        byte[] packed = new byte[CHUNK + 1024];
        int packedLength = 0;
        while (!deflater.finished()) {
            packedLength += deflater.deflate(packed, packedLength, Math.min(16384, packed.length - packedLength));
        }
        deflater.end();

        Path file = dir.resolve("job-" + job + ".bin");
        try (FileOutputStream out = new FileOutputStream(file.toFile())) {
            for (int off = 0; off < packedLength; off += 8192) {
                out.write(packed, off, Math.min(8192, packedLength - off));
            }
        }
        byte[] read = new byte[packedLength];
        try (RandomAccessFile in = new RandomAccessFile(file.toFile(), "r")) {
            for (int off = 0; off < packedLength; ) {
                int n = in.read(read, off, Math.min(4096, packedLength - off));
                if (n < 0) {
                    throw new IOException("short file " + file);
                }
                off += n;
            }
        }
        Files.delete(file);

        Inflater inflater = new Inflater();
        inflater.setInput(read);
        byte[] restored = new byte[CHUNK];
        int restoredLength = 0;
        while (!inflater.finished()) {
            restoredLength += inflater.inflate(restored, restoredLength, Math.min(16384, CHUNK - restoredLength));
        }
        inflater.end();
        aes.init(Cipher.DECRYPT_MODE, key, iv);
        byte[] decrypted = aes.doFinal(secret);
        if (restoredLength != CHUNK || !java.util.Arrays.equals(restored, plain) || !java.util.Arrays.equals(decrypted, plain)) {
            throw new IllegalStateException("job " + job + ": round trip mismatch");
        }

        for (String w : new String(plain, StandardCharsets.US_ASCII).split("[^A-Za-z]+")) {
            if (!w.isEmpty()) {
                words.computeIfAbsent(w.toLowerCase(java.util.Locale.ROOT), k -> new LongAdder()).increment();
            }
        }
        long digest = Common.digest(0, sha);
        digest = Common.digest(digest, secret, 0, 4096);
        return Common.digest(digest, packedLength);
    }
}
