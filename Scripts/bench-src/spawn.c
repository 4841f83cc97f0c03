/* Start a program N times and print the median and mean wall time of one start, in
 * microseconds: fork, exec, run, exit, wait. Output goes to /dev/null.
 *   spawn N program [args...] */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: spawn N program [args...]\n"); return 64; }
    int n = atoi(argv[1]);
    if (n <= 0) { fprintf(stderr, "spawn: N must be positive\n"); return 64; }
    double *times = malloc(sizeof(double) * n), sum = 0;
    int null = open("/dev/null", O_WRONLY);
    for (int i = 0; i < n; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        pid_t pid = fork();
        if (pid == 0) {
            dup2(null, 1);
            dup2(null, 2);
            execvp(argv[2], argv + 2);
            _exit(127);
        }
        int status;
        waitpid(pid, &status, 0);
        clock_gettime(CLOCK_MONOTONIC, &b);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "spawn: %s failed (status %d)\n", argv[2], status);
            return 1;
        }
        times[i] = (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3;
        sum += times[i];
    }
    qsort(times, n, sizeof(double), compare);
    printf("%.1f %.1f\n", times[n / 2], sum / n);
    return 0;
}
