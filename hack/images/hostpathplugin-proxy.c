/* The proxy mode of csi-driver-host-path's hostpathplugin (its internal/proxy), which
 * upstream's DRA e2e tests run in their kubelet-plugin pods
 * (test/e2e/testing-manifests/dra/dra-test-driver-proxy.yaml): `hostpathplugin
 * --endpoint=E1 --proxy-endpoint=E2` listens on both, and pairs the next connection
 * accepted on E1 (the kubelet dialing the plugin's socket) with the next one on E2 (the e2e
 * binary, which keeps connections open through a port-forward and serves the plugin's gRPC
 * on them), copying bytes both ways until either side ends. Both sockets stay open the whole
 * time, so the kernel accepts the e2e side's connections before a kubelet dials.
 *
 * hostpathplugin is not served by the Go module proxy here, so its image is this stand-in
 * (hack/build-images.sh --conformance): the proxy mode is all those tests run of it. An
 * endpoint is unix://PATH, tcp://[HOST]:PORT or a plain path (a unix socket), as
 * hostpathplugin's endpoint.Parse takes them; an existing socket file is replaced, as its
 * endpoint.Listen does. Other flags (--v=5) are accepted and ignored. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int listen_on(const char *ep) {
  int fd;
  if (strncasecmp(ep, "tcp://", 6) == 0) {
    const char *hostport = ep + 6, *colon = strrchr(hostport, ':');
    if (!colon) { fprintf(stderr, "invalid endpoint %s: no port\n", ep); return -1; }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atoi(colon + 1))};
    char host[64] = "0.0.0.0";
    if (colon > hostport && (size_t)(colon - hostport) < sizeof host) {
      memcpy(host, hostport, colon - hostport);
      host[colon - hostport] = 0;
    }
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) { fprintf(stderr, "invalid endpoint %s\n", ep); return -1; }
    fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0) { perror(ep); return -1; }
  } else {
    const char *path = strncasecmp(ep, "unix://", 7) == 0 ? ep + 7 : ep;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (!*path || strlen(path) >= sizeof a.sun_path) { fprintf(stderr, "invalid endpoint %s\n", ep); return -1; }
    strcpy(a.sun_path, path);
    if (unlink(path) < 0 && errno != ENOENT) { perror(path); return -1; }
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0) { perror(path); return -1; }
  }
  if (listen(fd, 128) < 0) { perror(ep); return -1; }
  return fd;
}

static int accept_retrying(int fd) {
  for (;;) {
    int c = accept(fd, NULL, NULL);
    if (c >= 0) return c;
    if (errno != EINTR && errno != ECONNABORTED) perror("accept");
  }
}

/* Copies both ways until either side reaches EOF or fails, then closes both (internal/proxy's
 * copy: the end of one direction closes the other's destination, which ends that one too). */
static void pipe_pair(int a, int b) {
  struct pollfd p[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
  char buf[65536];
  for (;;) {
    if (poll(p, 2, -1) < 0) { if (errno == EINTR) continue; return; }
    for (int i = 0; i < 2; i++) {
      if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(p[i].fd, buf, sizeof buf);
      if (n <= 0) return;
      for (ssize_t off = 0; off < n;) {
        ssize_t w = write(p[1 - i].fd, buf + off, n - off);
        if (w < 0) { if (errno == EINTR) continue; return; }
        off += w;
      }
    }
  }
}

int main(int argc, char **argv) {
  const char *endpoint = NULL, *proxy = NULL;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--endpoint=", 11) == 0) endpoint = argv[i] + 11;
    else if (strncmp(argv[i], "--proxy-endpoint=", 17) == 0) proxy = argv[i] + 17;
    else if (strcmp(argv[i], "--version") == 0) { puts("hostpathplugin proxy (kubelet-ts stand-in)"); return 0; }
  }
  if (!endpoint || !proxy) {
    fprintf(stderr, "usage: %s --endpoint=ENDPOINT --proxy-endpoint=ENDPOINT (only the proxy mode)\n", argv[0]);
    return 2;
  }
  signal(SIGCHLD, SIG_IGN); /* reap the copiers */
  int s1 = listen_on(endpoint), s2 = listen_on(proxy);
  if (s1 < 0 || s2 < 0) return 1;
  fprintf(stderr, "proxy listening on %s and %s\n", endpoint, proxy);
  pid_t self = getpid();
  for (;;) {
    int c1 = accept_retrying(s1), c2 = accept_retrying(s2);
    pid_t pid = fork();
    if (pid == 0) {
      /* A copier dies with the proxy, as the goroutines of hostpathplugin's one process do
       * when the e2e test kills it (its exec ends). */
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != self) _exit(0);
      close(s1);
      close(s2);
      pipe_pair(c1, c2);
      _exit(0);
    }
    if (pid < 0) perror("fork");
    close(c1);
    close(c2);
  }
}
