// The platform's native helper for sockets: Node cannot set SO_MARK on a socket before it
// connects, and the egress proxy's outgoing connections carry a mark so that the host's
// firewall (an output-chain rule on it, network/firewall.ts) refuses what no sandbox may reach
// even if the proxy's own checks were wrong. Plain C against Node-API.
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <node_api.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "napi_errors.h"


// markedTcpSocket(mark): a new IPv4 TCP socket (non-blocking, close-on-exec, not connected)
// whose packets carry `mark`; its fd, for `new net.Socket({ fd })`. Needs CAP_NET_ADMIN.
static napi_value marked_tcp_socket(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  uint32_t mark;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_uint32(env, argv[0], &mark) != napi_ok) {
    napi_throw_type_error(env, NULL, "markedTcpSocket(mark)");
    return NULL;
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    throw_errno_detail(env, errno, "socket", NULL, NULL);
    return NULL;
  }
  if (setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof mark) != 0) {
    int err = errno;
    close(fd);
    throw_errno_detail(env, err, "setsockopt(SO_MARK)", NULL, NULL);
    return NULL;
  }
  napi_value out;
  napi_create_int32(env, fd, &out);
  return out;
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  napi_value fn;
  napi_create_function(env, "markedTcpSocket", NAPI_AUTO_LENGTH, marked_tcp_socket, NULL, &fn);
  napi_set_named_property(env, exports, "markedTcpSocket", fn);
  return exports;
}
