package compat;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Loads every class of every module in the runtime image (jrt:/) and links it, so that under
 * -Xverify:all every class is verified. Class.forName(name, false, loader) loads without
 * initializing; getDeclaredMethods() makes HotSpot link (and so verify) the class first.
 *
 * Usage: EveryClass [STRIDE [FAILURES_FILE]]. STRIDE n > 1 takes every n-th class of the sorted
 * list (a deterministic sample). Run with --add-modules ALL-SYSTEM so that every module is in the
 * boot layer. Prints a summary on stdout and, in FAILURES_FILE, one "class<TAB>exception<TAB>message"
 * line per failure.
 */
public final class EveryClass {
    private EveryClass() {}

    public static void main(String[] args) throws IOException {
        int stride = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        Path failuresFile = args.length > 1 ? Paths.get(args[1]) : null;
        FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
        List<String[]> classes = new ArrayList<>(); // {module, binary name}
        List<String> modulesMissingFromLayer = new ArrayList<>();
        try (Stream<Path> modules = Files.list(jrt.getPath("/modules"))) {
            for (Path moduleDir : modules.sorted().collect(Collectors.toList())) {
                String module = moduleDir.getFileName().toString().replace("/", "");
                if (!ModuleLayer.boot().findModule(module).isPresent()) modulesMissingFromLayer.add(module);
                try (Stream<Path> files = Files.walk(moduleDir)) {
                    for (Path file : files.sorted().collect(Collectors.toList())) {
                        String relative = moduleDir.relativize(file).toString();
                        if (!relative.endsWith(".class") || relative.endsWith("module-info.class")) continue;
                        String name = relative.substring(0, relative.length() - 6).replace('/', '.');
                        classes.add(new String[] {module, name});
                    }
                }
            }
        }
        Map<String, Integer> failuresByType = new TreeMap<>();
        List<String> failureLines = new ArrayList<>();
        int attempted = 0;
        int linked = 0;
        for (int i = 0; i < classes.size(); i += stride) {
            String module = classes.get(i)[0];
            String name = classes.get(i)[1];
            attempted++;
            Optional<Module> found = ModuleLayer.boot().findModule(module);
            ClassLoader loader = found.isPresent() ? found.get().getClassLoader() : ClassLoader.getSystemClassLoader();
            try {
                Class<?> loaded = Class.forName(name, false, loader);
                loaded.getDeclaredMethods();
                linked++;
            } catch (Throwable failure) {
                Throwable cause = failure instanceof InvocationTargetException ? failure.getCause() : failure;
                String type = cause.getClass().getName();
                failuresByType.merge(type, 1, Integer::sum);
                String message = String.valueOf(cause.getMessage()).replace('\n', ' ').replace('\t', ' ');
                failureLines.add(name + "\t" + type + "\t" + message);
            }
        }
        PrintStream out = System.out;
        out.println("everyclass: runtime " + System.getProperty("java.runtime.version"));
        out.println("everyclass: classes in image " + classes.size() + ", stride " + stride);
        out.println("everyclass: attempted " + attempted + ", linked " + linked + ", failed " + failureLines.size());
        if (!modulesMissingFromLayer.isEmpty()) {
            out.println("everyclass: modules not in the boot layer (loaded via the system loader): " + modulesMissingFromLayer);
        }
        failuresByType.forEach((type, n) -> out.println("everyclass: failure " + type + " " + n));
        for (String line : failureLines) {
            if (line.contains("VerifyError") || line.contains("ClassFormatError")) out.println("everyclass: " + line);
        }
        if (failuresFile != null) Files.write(failuresFile, failureLines);
    }
}
