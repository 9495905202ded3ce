package compat;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * Defines malformed class files through a fresh class loader each, so that they pass through the
 * agent's ClassFileLoadHook; prints what the JVM made of each on stdout (the same with and without
 * the agent when the hook leaves them unchanged). The mutated classes have native methods, so the
 * agent cannot skip them as native-free. Usage: Malformed
 */
public final class Malformed {
    private Malformed() {}

    /** The cases, in output order; each name is also the binary name it is defined under. */
    static final String[] CASES = {
        "compat.Known", // intact: control, must load
        "compat.Truncated",
        "compat.TruncatedInMethods",
        "compat.BadMagic",
        "compat.FutureVersion",
        "compat.ConstantPoolTooShort",
        "compat.MethodCountTooHigh",
        "compat.Garbage",
    };

    static final class OneShotLoader extends ClassLoader {
        OneShotLoader() {
            super(Malformed.class.getClassLoader());
        }

        Class<?> define(String name, byte[] bytes) {
            return defineClass(name, bytes, 0, bytes.length);
        }
    }

    public static void main(String[] args) throws IOException {
        byte[] known;
        try (InputStream in = Malformed.class.getResourceAsStream("/compat/Known.class")) {
            known = in.readAllBytes();
        }
        for (String name : CASES) {
            byte[] bytes = mutate(name, known.clone());
            String outcome;
            try {
                Class<?> defined = new OneShotLoader().define(name.equals("compat.Known") ? name : null, bytes);
                defined.getDeclaredMethods(); // link (and verify) it
                outcome = "defined " + defined.getName();
            } catch (Throwable failure) {
                outcome = failure.getClass().getName() + ": " + failure.getMessage();
            }
            System.out.println(name + " -> " + outcome);
        }
        System.out.println("RESULT {\"malformed_classes_defined\":" + (CASES.length - 1) + "}");
    }

    static byte[] mutate(String name, byte[] bytes) {
        switch (name) {
            case "compat.Known": return bytes;
            case "compat.Truncated": return Arrays.copyOf(bytes, bytes.length / 2);
            case "compat.TruncatedInMethods": return Arrays.copyOf(bytes, bytes.length - 40);
            case "compat.BadMagic": bytes[3] = (byte) 0xBF; return bytes;
            case "compat.FutureVersion": bytes[6] = 0x7F; bytes[7] = (byte) 0xFF; return bytes;
            case "compat.ConstantPoolTooShort": bytes[8] = 0; bytes[9] = 5; return bytes;
            case "compat.MethodCountTooHigh": return bumpMethodCount(bytes);
            default: {
                byte[] garbage = new byte[200];
                for (int i = 0; i < garbage.length; i++) garbage[i] = (byte) (i * 37 + 11);
                garbage[0] = (byte) 0xCA; garbage[1] = (byte) 0xFE; garbage[2] = (byte) 0xBA; garbage[3] = (byte) 0xBE;
                return garbage;
            }
        }
    }

    /** Finds the methods_count (the u2 after the fields) by walking the class file, and adds 3. */
    static byte[] bumpMethodCount(byte[] b) {
        int pos = 10;
        int count = u2(b, 8);
        for (int i = 1; i < count; i++) {
            int tag = b[pos] & 0xff;
            switch (tag) {
                case 1: pos += 3 + u2(b, pos + 1); break;
                case 5: case 6: pos += 9; i++; break;
                case 7: case 8: case 16: case 19: case 20: pos += 3; break;
                case 15: pos += 4; break;
                default: pos += 5; // 3, 4, 9, 10, 11, 12, 17, 18
            }
        }
        pos += 6; // access, this, super
        pos += 2 + 2 * u2(b, pos); // interfaces
        int fields = u2(b, pos);
        pos += 2;
        for (int f = 0; f < fields; f++) {
            pos += 6;
            int attributes = u2(b, pos);
            pos += 2;
            for (int a = 0; a < attributes; a++) pos += 6 + u4(b, pos + 2);
        }
        int methods = u2(b, pos) + 3;
        b[pos] = (byte) (methods >> 8);
        b[pos + 1] = (byte) methods;
        return b;
    }

    static int u2(byte[] b, int at) {
        return ((b[at] & 0xff) << 8) | (b[at + 1] & 0xff);
    }

    static int u4(byte[] b, int at) {
        return (u2(b, at) << 16) | u2(b, at + 2);
    }
}
