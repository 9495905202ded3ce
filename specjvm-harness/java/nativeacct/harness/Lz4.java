package nativeacct.harness;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4FastDecompressor;
import net.jpountz.lz4.LZ4FrameInputStream;
import net.jpountz.lz4.LZ4FrameOutputStream;
import net.jpountz.lz4.LZ4SafeDecompressor;
import net.jpountz.xxhash.XXHash64;
import net.jpountz.xxhash.XXHashFactory;

/**
 * lz4: lz4-java's JNI codec (Debian's liblz4-jni, the system liblz4) compressing and decompressing a text
 * corpus in blocks, with native xxhash64 checksums, plus the LZ4 frame streams. Most of the work is native.
 * {@code --size}: corpus KiB; every pass walks the whole corpus.
 */
public final class Lz4 {
    public static void main(String[] args) throws Exception {
        int kib = Common.size(args, 4096);
        int passes = Integer.parseInt(Common.option(args, "--passes", "8"));
        LZ4Factory lz4 = LZ4Factory.nativeInstance();
        XXHashFactory xxhash = XXHashFactory.nativeInstance();
        // The JNI codec must be the one in use: the pure-Java fallbacks would make this workload meaningless.
        if (!lz4.toString().contains("JNI") || !xxhash.toString().contains("JNI")) {
            throw new IllegalStateException("lz4-java did not load its JNI library: " + lz4 + ", " + xxhash);
        }
        byte[] corpus = Common.text(4L, kib * 1024);
        long t0 = Common.start();
        LZ4Compressor fast = lz4.fastCompressor();
        LZ4Compressor high = lz4.highCompressor(9);
        LZ4SafeDecompressor safe = lz4.safeDecompressor();
        LZ4FastDecompressor exact = lz4.fastDecompressor();
        XXHash64 hash = xxhash.hash64();
        long digest = 0;
        long compressedTotal = 0;
        int[] blockSizes = {256, 1024, 4096, 16384};
        for (int pass = 0; pass < passes; pass++) {
            int block = blockSizes[pass % blockSizes.length];
            LZ4Compressor compressor = pass % 3 == 2 ? high : fast;
            byte[] compressed = new byte[compressor.maxCompressedLength(block)];
            byte[] restored = new byte[block];
            long passHash = pass;
            for (int off = 0; off + block <= corpus.length; off += block) {
                int n = compressor.compress(corpus, off, block, compressed, 0, compressed.length);
                compressedTotal += n;
                long h = hash.hash(compressed, 0, n, 0x9747b28cL);
                int m = (pass & 1) == 0
                        ? safe.decompress(compressed, 0, n, restored, 0)
                        : block - exact.decompress(compressed, 0, restored, 0, block) + n;
                if (m != block || hash.hash(restored, 0, block, 1L) != hash.hash(corpus, off, block, 1L)) {
                    throw new IllegalStateException("lz4 round trip mismatch at " + off + " in pass " + pass);
                }
                passHash = passHash * 31 + h;
            }
            digest = Common.digest(digest, passHash);
        }
        ByteArrayOutputStream framed = new ByteArrayOutputStream();
        try (LZ4FrameOutputStream out = new LZ4FrameOutputStream(framed)) {
            for (int off = 0; off < corpus.length; off += 1000) {
                out.write(corpus, off, Math.min(1000, corpus.length - off));
            }
        }
        byte[] restored;
        try (LZ4FrameInputStream in = new LZ4FrameInputStream(new ByteArrayInputStream(framed.toByteArray()))) {
            restored = in.readAllBytes();
        }
        if (!Arrays.equals(restored, corpus)) {
            throw new IllegalStateException("lz4 frame round trip mismatch");
        }
        Common.finish("lz4", t0);
        System.out.println("lz4: codec " + lz4 + ", corpus " + corpus.length + " bytes, " + passes + " passes, "
                + compressedTotal + " compressed bytes, frame " + framed.size() + " bytes, digest " + Common.hex(digest));
    }
}
