/* /bin/sh of the conformance tests' busybox image. Debian's busybox 1.35 ash (and bash as
 * "sh") drop environment variables whose names are not identifiers (data-1, 1-x, #@!x);
 * upstream's busybox image passes them on to what it runs, and the env-var tests check it.
 * So: busybox ash as usual, but bash (under its own name, which keeps them) when the
 * environment holds such a name. */
#include <stdio.h>
#include <unistd.h>

extern char **environ;

static int identifier(const char *s) {
  if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) return 0;
  for (s++; *s && *s != '='; s++)
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
  return 1;
}

int main(int argc, char **argv) {
  (void)argc;
  for (char **e = environ; *e; e++) {
    if (!identifier(*e)) {
      argv[0] = "bash";
      execv("/usr/bin/bash", argv);
      perror("/usr/bin/bash");
      return 127;
    }
  }
  /* argv[0] as invoked: busybox picks ash by its name, and ash prefixes its errors with it. */
  execv("/bin/busybox", argv);
  perror("/bin/busybox");
  return 127;
}
