package nativeacct.harness;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import java.util.zip.Inflater;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;
import org.apache.commons.compress.compressors.bzip2.BZip2CompressorInputStream;
import org.apache.commons.compress.compressors.bzip2.BZip2CompressorOutputStream;

/**
 * compress: bzip2 (commons-compress, pure Java) and deflate (java.util.zip, native zlib behind JNI) round
 * trips of a generated text corpus. {@code --size} is the corpus size in KiB.
 */
public final class Compress {
    private static final int CHUNK = 64 * 1024;

    public static void main(String[] args) throws Exception {
        int kib = Common.size(args, 1024);
        byte[] corpus = Common.text(20260101L, kib * 1024);
        long t0 = Common.start();

        byte[] bz = bzip2(corpus);
        check("bzip2", corpus, bunzip2(bz));
        System.out.println("compress: bzip2 " + corpus.length + " -> " + bz.length + " digest " + Common.hex(Common.digest(0, bz)));

        for (int level : new int[] {1, 6, 9}) {
            byte[] z = deflate(corpus, level);
            check("deflate" + level, corpus, inflate(z, corpus.length));
            System.out.println("compress: deflate level " + level + " " + corpus.length + " -> " + z.length + " digest " + Common.hex(Common.digest(0, z)));
        }

        byte[] gz = gzip(corpus);
        check("gzip", corpus, readAll(new GZIPInputStream(new ByteArrayInputStream(gz), 8192)));
        System.out.println("compress: gzip " + corpus.length + " -> " + gz.length);

        byte[] zip = zip(corpus);
        check("zip", corpus, unzip(zip));
        System.out.println("compress: zip entries " + ((corpus.length + CHUNK - 1) / CHUNK) + " -> " + zip.length);
        Common.finish("compress", t0);
    }

    static byte[] bzip2(byte[] data) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(data.length / 3);
        try (OutputStream bz = new BZip2CompressorOutputStream(out, 9)) {
            for (int off = 0; off < data.length; off += CHUNK) {
                bz.write(data, off, Math.min(CHUNK, data.length - off));
            }
        }
        return out.toByteArray();
    }

    static byte[] bunzip2(byte[] data) throws IOException {
        return readAll(new BZip2CompressorInputStream(new ByteArrayInputStream(data)));
    }

    /** Streams the input through a Deflater in 64 KiB steps, as an application compressing a feed would. */
    static byte[] deflate(byte[] data, int level) {
        Deflater deflater = new Deflater(level);
        ByteArrayOutputStream out = new ByteArrayOutputStream(data.length / 2);
        byte[] buffer = new byte[CHUNK];
        for (int off = 0; off < data.length; off += CHUNK) {
            deflater.setInput(data, off, Math.min(CHUNK, data.length - off));
            while (!deflater.needsInput()) {
                int n = deflater.deflate(buffer);
                out.write(buffer, 0, n);
            }
        }
        deflater.finish();
        while (!deflater.finished()) {
            int n = deflater.deflate(buffer);
            out.write(buffer, 0, n);
        }
        deflater.end();
        return out.toByteArray();
    }

    static byte[] inflate(byte[] data, int expected) throws DataFormatException {
        Inflater inflater = new Inflater();
        byte[] out = new byte[expected];
        int produced = 0;
        for (int off = 0; off < data.length || !inflater.finished(); ) {
            if (inflater.needsInput() && off < data.length) {
                int n = Math.min(8192, data.length - off);
                inflater.setInput(data, off, n);
                off += n;
            }
            produced += inflater.inflate(out, produced, Math.min(CHUNK, expected - produced));
            if (inflater.finished() || (off >= data.length && inflater.needsInput())) {
                break;
            }
        }
        inflater.end();
        return Arrays.copyOf(out, produced);
    }

    static byte[] gzip(byte[] data) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(data.length / 2);
        try (OutputStream gz = new GZIPOutputStream(out, 8192)) {
            for (int off = 0; off < data.length; off += 4096) {
                gz.write(data, off, Math.min(4096, data.length - off));
            }
        }
        return out.toByteArray();
    }

    static byte[] zip(byte[] data) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(data.length / 2);
        try (ZipOutputStream zip = new ZipOutputStream(out)) {
            for (int off = 0, i = 0; off < data.length; off += CHUNK, i++) {
                zip.putNextEntry(new ZipEntry("part-" + i + ".txt"));
                zip.write(data, off, Math.min(CHUNK, data.length - off));
                zip.closeEntry();
            }
        }
        return out.toByteArray();
    }

    static byte[] unzip(byte[] data) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(data.length * 3);
        try (ZipInputStream zip = new ZipInputStream(new ByteArrayInputStream(data))) {
            byte[] buffer = new byte[8192];
            while (zip.getNextEntry() != null) {
                for (int n; (n = zip.read(buffer)) > 0; ) {
                    out.write(buffer, 0, n);
                }
            }
        }
        return out.toByteArray();
    }

    static byte[] readAll(InputStream in) throws IOException {
        try (in) {
            return in.readAllBytes();
        }
    }

    static void check(String what, byte[] expected, byte[] actual) {
        if (!Arrays.equals(expected, actual)) {
            throw new IllegalStateException(what + ": round trip mismatch (" + actual.length + " bytes)");
        }
    }
}
