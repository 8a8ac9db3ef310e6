/* Runs a command once and prints "<wall s> <peak RSS bytes> <user+sys s>".
 * The bench harness uses this instead of timing from Python: the child is
 * spawned from a tiny process, so neither the interpreter's spawn overhead
 * nor its resident size (ru_maxrss survives exec) pollutes the numbers.
 * Usage: runone OUTFILE CMD ARGS...   (OUTFILE is removed first) */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: runone OUTFILE CMD ARGS...\n");
    return 2;
  }
  unlink(argv[1]);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1 /*O_WRONLY*/, 0);
  struct timespec t0, t1;
  pid_t pid;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (posix_spawnp(&pid, argv[2], &fa, NULL, argv + 2, environ) != 0) {
    perror("posix_spawnp");
    return 2;
  }
  int status;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0) {
    perror("wait4");
    return 2;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
  double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
               ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  printf("%.9f %ld %.6f\n", s, ru.ru_maxrss * 1024L, cpu);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return 1;
  return 0;
}
