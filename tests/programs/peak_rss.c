/*
 * peak_rss.c - test helper: run a command and write its peak resident set size (KiB, from
 * wait4's ru_maxrss) to a file, then exit with the command's status (128 + signal if killed).
 *   peak_rss OUTFILE CMD [ARGS...]
 *
 * Why not measure from Python: Linux keeps the high-water mark across execve, so a child
 * forked from the (100+ MiB) test interpreter reports at least the interpreter's size. A
 * child forked from this small program starts its count from this program's size.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: peak_rss OUTFILE CMD [ARGS...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 2;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        perror(argv[2]);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("wait4");
        return 2;
    }
    FILE *f = fopen(argv[1], "w");
    if (!f || fprintf(f, "%ld\n", ru.ru_maxrss) < 0 || fclose(f) != 0) {
        perror(argv[1]);
        return 2;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
