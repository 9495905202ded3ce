/* deny-perf: run a command with perf_event_open denied, the way a container's seccomp profile, a
 * hardened kernel or a sandbox denies it.
 *   deny-perf [--also-process-vm-readv] [EPERM|EACCES|ENOSYS] COMMAND [ARGS...]
 * --also-process-vm-readv denies process_vm_readv the same way (profiles without ptrace rights). 
 * Installs a seccomp filter on which perf_event_open fails with the given errno (EPERM by default:
 * what the default profiles of Docker, Podman and CRI-O return) and every other system call is
 * allowed, then execs COMMAND. The filter is inherited by every thread and child of COMMAND. Needs
 * no privilege (it sets no_new_privs first). */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define THIS_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define THIS_ARCH AUDIT_ARCH_AARCH64
#else
#error "deny-perf: unknown architecture"
#endif

static int errno_named(const char *name) {
    if (strcmp(name, "EPERM") == 0) return EPERM;
    if (strcmp(name, "EACCES") == 0) return EACCES;
    if (strcmp(name, "ENOSYS") == 0) return ENOSYS;
    return -1;
}

int main(int argc, char **argv) {
    int first = 1, denial = EPERM;
    /* The second system call denied: perf_event_open again unless asked (a repeated test). */
    long also = __NR_perf_event_open;
    if (argc > first && strcmp(argv[first], "--also-process-vm-readv") == 0) {
        also = __NR_process_vm_readv;
        first++;
    }
    if (argc > first && errno_named(argv[first]) > 0) {
        denial = errno_named(argv[first]);
        first++;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: deny-perf [--also-process-vm-readv] [EPERM|EACCES|ENOSYS] COMMAND [ARGS...]\n");
        return 2;
    }
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, THIS_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)also, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (denial & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = {.len = sizeof filter / sizeof filter[0], .filter = filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        perror("deny-perf: PR_SET_NO_NEW_PRIVS");
        return 126;
    }
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
        perror("deny-perf: PR_SET_SECCOMP");
        return 126;
    }
    execvp(argv[first], argv + first);
    fprintf(stderr, "deny-perf: cannot run %s: %s\n", argv[first], strerror(errno));
    return 127;
}
