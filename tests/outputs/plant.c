/* Plant symlinks at names that contain a pid, for a range of pids not yet used: run as another user
 * (`runuser -u nobody -- plant FROM COUNT PID_MAX TEMPLATE TARGET [TEMPLATE TARGET]...`) before a JVM
 * whose pid is not known in advance. Every "{pid}" in a TEMPLATE is the pid; pids past PID_MAX wrap to 300,
 * as the kernel's do. Existing names are left alone. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 6 || (argc - 4) % 2 != 0) {
        fprintf(stderr, "usage: plant FROM COUNT PID_MAX TEMPLATE TARGET [TEMPLATE TARGET]...\n");
        return 2;
    }
    long from = atol(argv[1]), count = atol(argv[2]), pid_max = atol(argv[3]);
    char name[4096];
    for (long i = 0; i < count; i++) {
        long pid = from + i;
        if (pid >= pid_max) pid = pid - pid_max + 300;
        for (int t = 4; t + 1 < argc; t += 2) {
            /* Every "{pid}" becomes the pid. */
            size_t used = 0;
            const char *rest = argv[t], *mark;
            while ((mark = strstr(rest, "{pid}")) != NULL && used < sizeof name) {
                used += snprintf(name + used, sizeof name - used, "%.*s%ld", (int)(mark - rest), rest, pid);
                rest = mark + 5;
            }
            if (rest == argv[t] || used >= sizeof name) {
                fprintf(stderr, "plant: no {pid} in %s, or too long\n", argv[t]);
                return 2;
            }
            snprintf(name + used, sizeof name - used, "%s", rest);
            if (symlink(argv[t + 1], name) != 0 && errno != EEXIST) {
                perror(name);
                return 1;
            }
        }
    }
    return 0;
}
