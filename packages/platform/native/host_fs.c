// The platform's native helper for files a tenant controls (template layers, unpacked build
// context, sandbox root filesystems, volumes), plain C against Node-API. Node has no openat2(2),
// and only openat2 resolves a path inside a directory without ever leaving it: the kernel, not a
// userspace walk, refuses `..` above the root, symbolic links (or resolves them as if the root
// were `/`), magic links and mount crossings, atomically with the open.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <node_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "napi_errors.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

#define throw_errno(env, err, syscall, path) throw_errno_detail(env, err, syscall, path, NULL)

static bool get_int64(napi_env env, napi_value v, int64_t* out) {
  if (napi_get_value_int64(env, v, out) == napi_ok) return true;
  napi_throw_type_error(env, NULL, "expected a number");
  return false;
}

// openat2(dirfd, path, flags, resolve, mode): fd. O_CLOEXEC is always added: no fd of a
// tenant's file may leak into the commands the platform starts.
static napi_value openat2_js(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 5) {
    napi_throw_type_error(env, NULL, "openat2(dirfd, path, flags, resolve, mode)");
    return NULL;
  }
  int64_t dirfd, flags, resolve, mode;
  if (!get_int64(env, argv[0], &dirfd) || !get_int64(env, argv[2], &flags) ||
      !get_int64(env, argv[3], &resolve) || !get_int64(env, argv[4], &mode))
    return NULL;
  size_t len = 0;
  if (napi_get_value_string_utf8(env, argv[1], NULL, 0, &len) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected a path string");
    return NULL;
  }
  char* path = malloc(len + 1);
  if (!path) {
    throw_errno(env, ENOMEM, "openat2", "");
    return NULL;
  }
  napi_get_value_string_utf8(env, argv[1], path, len + 1, &len);
  if (strlen(path) != len) {  // an embedded NUL would open a different path than was checked
    free(path);
    throw_errno(env, EINVAL, "openat2", "");
    return NULL;
  }
  struct open_how how = {
      .flags = (uint64_t)flags | O_CLOEXEC,
      .mode = (flags & (O_CREAT | O_TMPFILE)) ? (uint64_t)mode : 0,
      .resolve = (uint64_t)resolve,
  };
  long fd;
  do {
    fd = syscall(SYS_openat2, (int)dirfd, path, &how, sizeof how);
  } while (fd < 0 && (errno == EINTR || errno == EAGAIN) && !(flags & O_NONBLOCK));
  if (fd < 0) {
    int err = errno;
    throw_errno(env, err, "openat2", path);
    free(path);
    return NULL;
  }
  free(path);
  napi_value result;
  napi_create_int32(env, (int32_t)fd, &result);
  return result;
}

static void set_int(napi_env env, napi_value obj, const char* name, int64_t value) {
  napi_value v;
  napi_create_int64(env, value, &v);
  napi_set_named_property(env, obj, name, v);
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  napi_value fn, constants;
  napi_create_function(env, "openat2", NAPI_AUTO_LENGTH, openat2_js, NULL, &fn);
  napi_set_named_property(env, exports, "openat2", fn);
  napi_create_object(env, &constants);
  set_int(env, constants, "AT_FDCWD", AT_FDCWD);
  set_int(env, constants, "O_PATH", O_PATH);
  set_int(env, constants, "O_RDONLY", O_RDONLY);
  set_int(env, constants, "O_DIRECTORY", O_DIRECTORY);
  set_int(env, constants, "O_NOFOLLOW", O_NOFOLLOW);
  set_int(env, constants, "O_NONBLOCK", O_NONBLOCK);
  set_int(env, constants, "O_NOCTTY", O_NOCTTY);
  set_int(env, constants, "RESOLVE_NO_XDEV", RESOLVE_NO_XDEV);
  set_int(env, constants, "RESOLVE_NO_MAGICLINKS", RESOLVE_NO_MAGICLINKS);
  set_int(env, constants, "RESOLVE_NO_SYMLINKS", RESOLVE_NO_SYMLINKS);
  set_int(env, constants, "RESOLVE_BENEATH", RESOLVE_BENEATH);
  set_int(env, constants, "RESOLVE_IN_ROOT", RESOLVE_IN_ROOT);
  napi_set_named_property(env, exports, "constants", constants);
  return exports;
}
