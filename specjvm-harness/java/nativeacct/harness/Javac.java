package nativeacct.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * javac: the JDK's own compiler, in process, compiling a real source tree (the harness's Java sources,
 * files or directories given with {@code --sources A:B:... --classpath CP}) plus {@code --size} generated classes, several rounds.
 * It reads the platform classes through jrt and ct.sym and writes class files, so file and zip natives run.
 */
public final class Javac {
    public static void main(String[] args) throws Exception {
        int generated = Common.size(args, 40);
        int rounds = Integer.parseInt(Common.option(args, "--rounds", "3"));
        String sourceDir = Common.option(args, "--sources", null);
        String classpath = Common.option(args, "--classpath", "");
        Path work = Files.createTempDirectory("nativeacct-javac");
        try {
            List<String> files = new ArrayList<>();
            if (sourceDir != null) {
                for (String entry : sourceDir.split(java.io.File.pathSeparator)) {
                    try (Stream<Path> tree = Files.walk(Path.of(entry))) {
                        tree.filter(p -> p.toString().endsWith(".java")).sorted().forEach(p -> files.add(p.toString()));
                    }
                }
            }
            files.addAll(generate(work.resolve("src"), generated));
            JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
            long t0 = Common.start();
            long digest = 0;
            int classes = 0;
            for (int round = 0; round < rounds; round++) {
                Path out = work.resolve("out" + round);
                Files.createDirectories(out);
                List<String> javacArgs = new ArrayList<>(List.of("-d", out.toString(), "-cp", classpath, "-nowarn", "-g",
                        "-encoding", "UTF-8", "-Xlint:none", "-implicit:none"));
                javacArgs.addAll(files);
                int rc = compiler.run(null, null, System.err, javacArgs.toArray(new String[0]));
                if (rc != 0) {
                    throw new IllegalStateException("javac exited with " + rc);
                }
                List<Path> produced = listClasses(out);
                digest = 0;
                for (Path p : produced) {
                    digest = Common.digest(digest, out.relativize(p).toString());
                    digest = Common.digest(digest, Files.readAllBytes(p));
                }
                classes = produced.size();
            }
            Common.finish("javac", t0);
            System.out.println("javac: " + files.size() + " sources -> " + classes + " classes, " + rounds
                    + " rounds, digest " + Common.hex(digest));
        } finally {
            deleteTree(work);
        }
    }

    private static List<Path> listClasses(Path root) throws IOException {
        try (Stream<Path> tree = Files.walk(root)) {
            return tree.filter(p -> p.toString().endsWith(".class")).sorted().toList();
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> tree = Files.walk(root)) {
            tree.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.delete(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }

    /**
     * Writes {@code count} seeded classes in a few packages: records, interfaces, generics, lambdas and
     * streams, switch expressions, nested classes and cross-class calls, the things that keep javac's
     * attribution and code generation busy.
     */
    public static List<String> generate(Path root, int count) throws IOException {
        SplittableRandom random = new SplittableRandom(7L);
        List<String> files = new ArrayList<>();
        int packages = Math.max(1, count / 25);
        for (int i = 0; i < count; i++) {
            String pkg = "gen.p" + (i % packages);
            Path dir = root.resolve(pkg.replace('.', '/'));
            Files.createDirectories(dir);
            String name = "Unit" + i;
            StringBuilder src = new StringBuilder();
            src.append("package ").append(pkg).append(";\n\n");
            src.append("import java.util.*;\nimport java.util.function.*;\nimport java.util.stream.*;\n\n");
            src.append("public final class ").append(name).append(" implements Comparable<").append(name).append("> {\n");
            src.append("    public record Point(int x, long y, String tag) {\n");
            src.append("        public Point { Objects.requireNonNull(tag); }\n");
            src.append("        public long weight() { return x * 31L + y + tag.length(); }\n    }\n\n");
            src.append("    public interface Shape { double area(); default String label() { return getClass().getSimpleName() + area(); } }\n");
            src.append("    public static final class Box<T extends Comparable<T>> implements Shape {\n");
            src.append("        private final List<T> items = new ArrayList<>();\n");
            src.append("        public Box<T> add(T item) { items.add(item); return this; }\n");
            src.append("        public Optional<T> max() { return items.stream().max(Comparator.naturalOrder()); }\n");
            src.append("        @Override public double area() { return items.size() * 1.5; }\n    }\n\n");
            src.append("    private final int seed;\n    private final Map<String, List<Point>> index = new TreeMap<>();\n\n");
            src.append("    public ").append(name).append("(int seed) { this.seed = seed; }\n\n");
            src.append("    @Override public int compareTo(").append(name).append(" other) { return Integer.compare(seed, other.seed); }\n\n");
            int methods = 4 + random.nextInt(8);
            for (int m = 0; m < methods; m++) {
                switch (random.nextInt(5)) {
                    case 0 -> {
                        src.append("    public int compute").append(m).append("(int n) {\n");
                        src.append("        int acc = seed;\n        for (int i = 0; i < n; i++) {\n");
                        src.append("            acc = switch (i % 4) { case 0 -> acc + i; case 1 -> acc ^ (i << 3); case 2 -> acc * 17 - i; default -> acc >>> 1; };\n");
                        src.append("        }\n        return acc;\n    }\n\n");
                    }
                    case 1 -> {
                        src.append("    public List<String> names").append(m).append("(Collection<? extends CharSequence> input) {\n");
                        src.append("        return input.stream().map(CharSequence::toString).filter(s -> !s.isEmpty())\n");
                        src.append("            .map(s -> s.toUpperCase(Locale.ROOT) + ").append(random.nextInt(100)).append(")\n");
                        src.append("            .sorted(Comparator.comparing(String::length).thenComparing(Function.identity())).collect(Collectors.toList());\n    }\n\n");
                    }
                    case 2 -> {
                        src.append("    public long points").append(m).append("(int n) {\n");
                        src.append("        List<Point> list = new ArrayList<>();\n");
                        src.append("        for (int i = 0; i < n; i++) list.add(new Point(i, (long) i * seed, \"t\" + (i % 7)));\n");
                        src.append("        index.computeIfAbsent(\"k").append(m).append("\", k -> new ArrayList<>()).addAll(list);\n");
                        src.append("        return list.stream().mapToLong(Point::weight).sum();\n    }\n\n");
                    }
                    case 3 -> {
                        src.append("    public <K extends Comparable<K>, V> SortedMap<K, List<V>> group").append(m)
                                .append("(List<V> values, Function<? super V, ? extends K> key) {\n");
                        src.append("        SortedMap<K, List<V>> out = new TreeMap<>();\n");
                        src.append("        for (V v : values) out.computeIfAbsent(key.apply(v), k -> new LinkedList<>()).add(v);\n");
                        src.append("        return out;\n    }\n\n");
                    }
                    default -> {
                        int target = random.nextInt(Math.max(1, i + 1));
                        String other = "gen.p" + (target % packages) + ".Unit" + target;
                        src.append("    public Object link").append(m).append("(Object o) {\n");
                        src.append("        if (o instanceof ").append(other).append(" u && u.compareTo(new ").append(other)
                                .append("(").append(m).append(")) > 0) {\n");
                        src.append("            return new Box<String>().add(u.toString()).add(\"x\").max().orElse(\"\");\n        }\n");
                        src.append("        try {\n            return String.valueOf(o).repeat(2);\n        } catch (RuntimeException e) {\n");
                        src.append("            throw new IllegalStateException(\"unit ").append(i).append("\", e);\n        }\n    }\n\n");
                    }
                }
            }
            src.append("}\n");
            Path file = dir.resolve(name + ".java");
            Files.writeString(file, src);
            files.add(file.toString());
        }
        return files;
    }
}
