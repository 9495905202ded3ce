package compat;

import java.io.InputStream;

/**
 * Class churn: defines compat.Known (a class with natives, so the agent rewrites it) ROUNDS x PER_ROUND
 * times, each in a class loader that is dropped at once, and reports RSS after each round, once the
 * dropped classes are collected. Usage: ClassChurn ROUNDS PER_ROUND
 */
public final class ClassChurn {
    private ClassChurn() {}

    static final class OneShotLoader extends ClassLoader {
        OneShotLoader() {
            super(ClassChurn.class.getClassLoader());
        }

        Class<?> define(byte[] bytes) {
            return defineClass("compat.Known", bytes, 0, bytes.length);
        }
    }

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int perRound = Integer.parseInt(args[1]);
        byte[] known;
        try (InputStream in = ClassChurn.class.getResourceAsStream("/compat/Known.class")) {
            known = in.readAllBytes();
        }
        long defined = 0;
        StringBuilder byRound = new StringBuilder();
        for (int round = 0; round < rounds; round++) {
            for (int i = 0; i < perRound; i++) {
                new OneShotLoader().define(known).getDeclaredMethods();
                defined++;
            }
            Churn.settle();
            byRound.append(round == 0 ? "" : ",").append(Churn.rssKib());
        }
        System.out.println("RESULT {\"classes_defined\":" + defined + ",\"rss_kib_by_round\":[" + byRound + "]}");
    }

}
