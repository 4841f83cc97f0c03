/* Start a program N times and print, for one start (fork, exec, run, exit, wait), in
 * microseconds: the median and mean wall time, the fastest wall time, and the median user and
 * system CPU time of the child (its rusage from wait4). Output goes to /dev/null.
 *   spawn N program [args...]
 * Noise on a shared machine only ever adds time, so the fastest run is the steadiest wall
 * figure; CPU time is what the program itself spent, whatever else the machine was doing. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double us(struct timeval t) { return t.tv_sec * 1e6 + t.tv_usec; }

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: spawn N program [args...]\n"); return 64; }
    int n = atoi(argv[1]);
    if (n <= 0) { fprintf(stderr, "spawn: N must be positive\n"); return 64; }
    double *times = malloc(sizeof(double) * n), *user = malloc(sizeof(double) * n), *sys = malloc(sizeof(double) * n), sum = 0;
    int null = open("/dev/null", O_WRONLY);
    for (int i = 0; i < n; i++) {
        struct timespec a, b;
        struct rusage usage;
        clock_gettime(CLOCK_MONOTONIC, &a);
        pid_t pid = fork();
        if (pid == 0) {
            dup2(null, 1);
            dup2(null, 2);
            execvp(argv[2], argv + 2);
            _exit(127);
        }
        int status;
        wait4(pid, &status, 0, &usage);
        clock_gettime(CLOCK_MONOTONIC, &b);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "spawn: %s failed (status %d)\n", argv[2], status);
            return 1;
        }
        times[i] = (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3;
        user[i] = us(usage.ru_utime);
        sys[i] = us(usage.ru_stime);
        sum += times[i];
    }
    double mean = sum / n;
    qsort(times, n, sizeof(double), compare);
    qsort(user, n, sizeof(double), compare);
    qsort(sys, n, sizeof(double), compare);
    printf("%.1f %.1f %.1f %.1f %.1f\n", times[n / 2], mean, times[0], user[n / 2], sys[n / 2]);
    return 0;
}
