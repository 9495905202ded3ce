import java.nio.file.*;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.*;

/**
 * Plays the other user while the agent runs: at start, before the program it wraps, it plants the
 * names listed in the file named by -Dplant= (one per line, tab-separated; "{pid}" is this JVM's pid):
 *   link  NAME TARGET   a symlink made by nobody (runuser -u nobody -- ln -s TARGET NAME)
 * Then, with -Dlisting=FILE, it writes every entry of -Ddir= that is not a symlink (name, permissions,
 * owner), which shows what the agent has created by then, and runs MAIN ARGS... It prints its pid first.
 */
public class Planter {
    public static void main(String[] args) throws Exception {
        String pid = Long.toString(ProcessHandle.current().pid());
        System.out.println("pid " + pid);
        String plan = System.getProperty("plant");
        if (plan != null) {
            for (String line : Files.readAllLines(Path.of(plan))) {
                if (line.isBlank()) continue;
                String[] f = line.split("\t");
                if (!f[0].equals("link") || f.length != 3) throw new IllegalArgumentException(line);
                run("runuser", "-u", "nobody", "--", "ln", "-s", f[2], f[1].replace("{pid}", pid));
            }
        }
        String listing = System.getProperty("listing");
        if (listing != null) {
            List<String> lines = new ArrayList<>();
            try (DirectoryStream<Path> dir = Files.newDirectoryStream(Path.of(System.getProperty("dir")))) {
                for (Path p : dir) {
                    if (Files.isSymbolicLink(p)) continue;
                    lines.add(p.getFileName() + "\t"
                            + PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS))
                            + "\t" + Files.getOwner(p, LinkOption.NOFOLLOW_LINKS).getName());
                }
            }
            Collections.sort(lines);
            Files.write(Path.of(listing), lines);
        }
        Class.forName(args[0]).getMethod("main", String[].class)
                .invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
    }

    static void run(String... command) throws Exception {
        int code = new ProcessBuilder(command).inheritIO().start().waitFor();
        if (code != 0) throw new IllegalStateException(String.join(" ", command) + " exited with " + code);
    }
}
