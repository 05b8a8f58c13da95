/* The sandbox ("pause") process: holds a pod's namespaces open until told to stop.
 * It must block forever (a shell exits at once and the sandbox goes NOTREADY),
 * exit 0 on TERM/INT so StopPodSandbox is quick, and reap zombies when it is PID 1
 * of a shared PID namespace. Built with gcc -static by hack/build-images.sh. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig) { (void)sig; _exit(0); }

static void on_child(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {}
}

int main(int argc, char **argv) {
  if (argc > 1 && (strcmp(argv[1], "-v") == 0 || strcmp(argv[1], "--version") == 0)) {
    puts("pause (kubelet-ts)");
    return 0;
  }
  struct sigaction stop = {0}, child = {0};
  stop.sa_handler = on_stop;
  sigaction(SIGINT, &stop, NULL);
  sigaction(SIGTERM, &stop, NULL);
  child.sa_handler = on_child;
  child.sa_flags = SA_NOCLDSTOP | SA_RESTART;
  sigaction(SIGCHLD, &child, NULL);
  for (;;) pause();
  return 1; /* not reached */
}
