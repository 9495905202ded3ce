import java.io.*;
import java.nio.file.*;
import java.util.zip.*;

/**
 * The bundled demo workload for nativeacct: a checksum computed by its own JNI library (with a
 * progress callback from C into Java), the same checksum in plain Java, compression with
 * java.util.zip, and file I/O, spread over two threads.
 */
public class Demo {
    static { System.loadLibrary("demo"); }

    /** Adler-style checksum of `data` in C; calls progress() back into Java every 64 KiB. */
    static native long nativeChecksum(byte[] data, int rounds);

    static long progressCalls;
    static void progress(int offset) { progressCalls++; }

    static long javaChecksum(byte[] data, int rounds) {
        long a = 1, b = 0;
        for (int r = 0; r < rounds; r++) {
            for (byte x : data) {
                a = (a + (x & 0xff)) % 65521;
                b = (b + a) % 65521;
            }
        }
        return (b << 16) | a;
    }

    public static void main(String[] args) throws Exception {
        int size = 1 << 20;
        byte[] data = new byte[size];
        long seed = 42;
        for (int i = 0; i < size; i++) {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            data[i] = (byte) ((seed >>> 59) + 'a');
        }

        Thread zipper = new Thread(() -> {
            try {
                Path file = Files.createTempFile("nativeacct-demo", ".gz");
                for (int i = 0; i < 6; i++) {
                    try (OutputStream out = new GZIPOutputStream(new FileOutputStream(file.toFile()))) {
                        out.write(data);
                    }
                    try (InputStream in = new GZIPInputStream(new FileInputStream(file.toFile()))) {
                        byte[] buf = new byte[8192];
                        while (in.read(buf) > 0) { }
                    }
                }
                Files.delete(file);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, "zipper");
        zipper.start();

        long fromC = nativeChecksum(data, 20);
        long fromJava = javaChecksum(data, 20);
        zipper.join();
        System.out.println("checksum (native) " + Long.toHexString(fromC));
        System.out.println("checksum (java)   " + Long.toHexString(fromJava));
        System.out.println(fromC == fromJava ? "checksums agree" : "CHECKSUMS DIFFER");
        System.out.println("progress callbacks from C: " + progressCalls);
    }
}
