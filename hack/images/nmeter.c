/* nmeter of the conformance tests' busybox image: Debian's busybox-static has no nmeter
 * applet, and upstream's node e2e Containers Lifecycle tests time events with
 * `nmeter -d0 '%3t' | head -n1` (milliseconds, which busybox's date lacks). This one knows
 * what those tests use: -d MSEC (the delay between lines; -1: one line) and the %[N]t field
 * (HH:MM:SS with N digits of fractional seconds, local time as busybox prints it); other
 * text is copied, %% is a percent sign, and other fields print nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static void line(const char *fmt) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  struct tm tm;
  localtime_r(&tv.tv_sec, &tm);
  for (const char *p = fmt; *p; p++) {
    if (*p != '%') { putchar(*p); continue; }
    p++;
    if (*p == '%') { putchar('%'); continue; }
    int digits = 0;
    if (*p >= '0' && *p <= '9') digits = *p++ - '0';
    if (*p == 't') {
      printf("%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
      if (digits > 0) {
        if (digits > 6) digits = 6;
        char frac[8];
        snprintf(frac, sizeof frac, "%06ld", (long)tv.tv_usec);
        frac[digits] = 0;
        printf(".%s", frac);
      }
    } else if (!*p) {
      break;
    }
  }
  putchar('\n');
  fflush(stdout);
}

int main(int argc, char **argv) {
  long delay = 1000;
  int opt;
  while ((opt = getopt(argc, argv, "d:")) != -1) {
    if (opt == 'd') delay = strtol(optarg, NULL, 10);
    else { fprintf(stderr, "usage: nmeter [-d MSEC] FORMAT\n"); return 1; }
  }
  if (optind >= argc) { fprintf(stderr, "usage: nmeter [-d MSEC] FORMAT\n"); return 1; }
  for (;;) {
    line(argv[optind]);
    if (ferror(stdout) || delay < 0) return 0;
    if (delay > 0) usleep((useconds_t)delay * 1000);
  }
}
