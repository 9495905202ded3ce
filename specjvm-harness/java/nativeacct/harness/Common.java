package nativeacct.harness;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * Shared helpers for the harness workloads: argument parsing, seeded input generators, a cheap pure-Java
 * digest, and the one line of timing each workload writes to stderr for the harness to pick up.
 *
 * <p>Every workload prints only deterministic results (sizes, digests) on stdout, so the harness can check
 * that a run under the agent produced exactly the same output as a run without it.
 */
public final class Common {
    private Common() {}

    /** The size argument: {@code --size N}; every workload has one integer knob, chosen by the harness. */
    public static int size(String[] args, int fallback) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals("--size")) {
                return Integer.parseInt(args[i + 1]);
            }
        }
        return fallback;
    }

    /** The value after {@code name}, or {@code fallback}. */
    public static String option(String[] args, String name, String fallback) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals(name)) {
                return args[i + 1];
            }
        }
        return fallback;
    }

    /** Records the start of the measured part; pair with {@link #finish}. */
    public static long start() {
        return System.nanoTime();
    }

    /** Writes the in-process work time for the harness (stderr, one line, machine-readable). */
    public static void finish(String workload, long startNanos) {
        long elapsed = System.nanoTime() - startNanos;
        System.err.println("nativeacct-harness: workload=" + workload + " work_ns=" + elapsed);
    }

    private static final String[] SYLLABLES = {
        "ka", "lo", "mi", "nu", "ter", "ran", "sol", "vi", "en", "ad", "or", "is", "que", "pre", "con", "st",
        "al", "ex", "ion", "ment", "bar", "dor", "fi", "gu", "ha", "je", "ly", "ph", "ro", "sa", "th", "we",
    };

    /** A vocabulary of {@code count} pseudo-words built from syllables, the same for a given seed. */
    public static String[] vocabulary(long seed, int count) {
        SplittableRandom random = new SplittableRandom(seed);
        String[] words = new String[count];
        StringBuilder word = new StringBuilder();
        for (int i = 0; i < count; i++) {
            word.setLength(0);
            int syllables = 1 + random.nextInt(4);
            for (int s = 0; s < syllables; s++) {
                word.append(SYLLABLES[random.nextInt(SYLLABLES.length)]);
            }
            words[i] = word.toString();
        }
        return words;
    }

    /**
     * Text-like bytes: words drawn with a skewed (roughly Zipf) distribution, sentences and line breaks,
     * so that compressors see realistic redundancy.
     */
    public static byte[] text(long seed, int bytes) {
        String[] words = vocabulary(seed, 4096);
        SplittableRandom random = new SplittableRandom(seed * 31 + 7);
        StringBuilder out = new StringBuilder(bytes + 64);
        int wordsInSentence = 0;
        int lineLength = 0;
        while (out.length() < bytes) {
            // Squaring a uniform draw favours small indices: a cheap skewed distribution.
            double u = random.nextDouble();
            String w = words[(int) (u * u * u * words.length)];
            if (wordsInSentence == 0) {
                out.append(Character.toUpperCase(w.charAt(0))).append(w, 1, w.length());
            } else {
                out.append(w);
            }
            lineLength += w.length() + 1;
            wordsInSentence++;
            if (wordsInSentence > 6 && random.nextInt(8) == 0) {
                out.append(random.nextInt(5) == 0 ? ", " : ". ");
                wordsInSentence = random.nextInt(3) == 0 ? 1 : 0;
            } else if (lineLength > 72) {
                out.append('\n');
                lineLength = 0;
            } else {
                out.append(' ');
            }
            if (random.nextInt(50) == 0) {
                out.append(random.nextInt(100000)).append(' ');
            }
        }
        out.setLength(bytes);
        return out.toString().getBytes(StandardCharsets.US_ASCII);
    }

    /** A pure-Java 64-bit digest (FNV-1a style with a final mix); not a native, so it adds no crossings. */
    public static long digest(long state, byte[] data, int offset, int length) {
        long h = state == 0 ? 0xcbf29ce484222325L : state;
        for (int i = offset; i < offset + length; i++) {
            h ^= data[i] & 0xff;
            h *= 0x100000001b3L;
        }
        return h;
    }

    public static long digest(long state, byte[] data) {
        return digest(state, data, 0, data.length);
    }

    public static long digest(long state, String text) {
        return digest(state, text.getBytes(StandardCharsets.UTF_8));
    }

    public static long digest(long state, long value) {
        long h = state == 0 ? 0xcbf29ce484222325L : state;
        for (int i = 0; i < 8; i++) {
            h ^= (value >>> (8 * i)) & 0xff;
            h *= 0x100000001b3L;
        }
        return h;
    }

    public static String hex(long value) {
        return String.format("%016x", value);
    }
}
