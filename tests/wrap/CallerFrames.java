import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

/**
 * Calls the java.base natives whose VM code inspects its caller's frames and prints what they
 * found. Its stdout must be the same with and without the agent in j2n=wrap.
 */
public class CallerFrames {
    static class Context extends SecurityManager {
        List<String> classes() {
            Class<?>[] context = getClassContext();
            // Lambda classes carry an address in their name: print what they are instead.
            return java.util.Arrays.stream(context).limit(4)
                    .map(c -> c.getName().contains("$$Lambda") ? "<lambda>" : c.getName())
                    .collect(Collectors.toList());
        }
    }

    static class Payload implements Serializable {
        private static final long serialVersionUID = 1L;
        final int value;

        Payload(int value) {
            this.value = value;
        }
    }

    static void print(String what, Callable<Object> call) {
        Object result;
        try {
            result = call.call();
        } catch (Throwable t) {
            result = "threw " + t.getClass().getName();
        }
        System.out.println(what + ": " + result);
    }

    /** Deep enough that StackWalker needs more than its first batch (fetchStackFrames). */
    static List<String> walk(int depth) {
        if (depth > 0) {
            return walk(depth - 1);
        }
        return StackWalker.getInstance().walk(s -> s.map(f -> f.getClassName() + "." + f.getMethodName())
                .collect(Collectors.toList()));
    }

    public static void main(String[] args) {
        print("getClassContext", () -> new Context().classes());
        print("walk", () -> {
            List<String> frames = walk(100);
            return frames.size() + " frames, top " + frames.subList(0, 3) + ", bottom "
                    + frames.get(frames.size() - 1);
        });
        print("callerClass", () -> StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE)
                .getCallerClass().getName());
        print("forName", () -> Class.forName("CallerFrames$Payload").getName());
        print("accessContext", () -> java.security.AccessController.getContext() != null);
        print("deserialize", () -> {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
                out.writeObject(new Payload(42));
            }
            try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
                return ((Payload) in.readObject()).value;
            }
        });
        print("stackTrace", () -> java.util.Arrays.asList(new Throwable().getStackTrace()).subList(0, 2));
    }
}
