// The machine's floor for bench/bag (b), in C: the files named in a list
// (one path a line) read from the page cache through one reused 1 MiB
// buffer and split into lines with memchr (each line's end found, as a
// reader that hands out lines must). Prints one JSON line: lines, bytes,
// seconds. bench/bag/run.js compiles it (gcc -O2) and runs one per core.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  FILE *list = fopen(argv[1], "r");
  if (!list) return 2;
  enum { BUF = 1 << 20 };
  char *buf = aligned_alloc(4096, BUF);
  char path[4096];
  long long lines = 0, bytes = 0;
  double t = now();
  while (fgets(path, sizeof path, list)) {
    path[strcspn(path, "\n")] = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) { perror(path); return 1; }
    ssize_t n;
    char last = '\n';
    while ((n = read(fd, buf, BUF)) > 0) {
      bytes += n;
      const char *p = buf, *end = buf + n;
      while ((p = memchr(p, '\n', end - p)) != NULL) { lines++; p++; }
      last = buf[n - 1];
    }
    if (last != '\n') lines++;  // a last line without its delimiter
    close(fd);
  }
  printf("{\"side\":\"floor-c\",\"lines\":%lld,\"bytes\":%lld,\"seconds\":%.6f}\n", lines, bytes, now() - t);
  return 0;
}
