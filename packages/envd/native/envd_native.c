// envd's native helpers, plain C against Node-API:
//  - inotify: a non-blocking inotify fd polled by libuv on the main loop (no thread-pool
//    reads), each readable batch parsed and handed to a JS callback as an array of events;
//  - extended attributes with l*xattr semantics (a final symlink is not followed);
//  - the lstat and xattr names of a directory's entries in one call (listings);
//  - this process's RLIMIT_NPROC.
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <node_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <uv.h>

#include "errno-names.h"

#define CHECK(env, call)                                   \
  do {                                                     \
    if ((call) != napi_ok) {                               \
      throw_last_napi_error(env);                          \
      return NULL;                                         \
    }                                                      \
  } while (0)

static void throw_last_napi_error(napi_env env) {
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (pending) return;
  const napi_extended_error_info* info = NULL;
  napi_get_last_error_info(env, &info);
  napi_throw_error(env, NULL, info && info->error_message ? info->error_message : "Node-API call failed");
}

// Throws an Error whose `code` is the errno name, like Node's own fs errors.
static void throw_errno(napi_env env, int err, const char* syscall, const char* path) {
  char msg[PATH_MAX + 128];
  snprintf(msg, sizeof msg, "%s: %s, %s '%s'", errno_code(err), strerror(err), syscall, path ? path : "");
  napi_throw_error(env, errno_code(err), msg);
}

// Reads a JS string argument into a malloc'd UTF-8 buffer (caller frees).
static char* get_string(napi_env env, napi_value value) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &len) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected a string");
    return NULL;
  }
  char* buf = malloc(len + 1);
  if (!buf) {
    napi_throw_error(env, "ENOMEM", "out of memory");
    return NULL;
  }
  napi_get_value_string_utf8(env, value, buf, len + 1, &len);
  return buf;
}

// Fetches exactly `want` arguments; false (with a TypeError pending) when fewer were passed.
static bool get_args(napi_env env, napi_callback_info info, size_t want, napi_value* argv) {
  size_t argc = want;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) {
    throw_last_napi_error(env);
    return false;
  }
  if (argc < want) {
    napi_throw_type_error(env, NULL, "missing arguments");
    return false;
  }
  return true;
}

// ---------------------------------------------------------------- inotify

typedef struct {
  napi_env env;
  int fd;
  uv_poll_t poll;
  napi_ref callback;
  napi_async_context async;
  bool closed;       // inotifyClose ran (or the finalizer did its work)
  bool poll_closed;  // libuv is done with `poll`
  bool finalized;    // the JS external was collected
} Inotify;

// The struct is shared by the JS external and the libuv handle; the last one to let go frees it.
static void maybe_free(Inotify* self) {
  if (self->poll_closed && self->finalized) free(self);
}

static void on_poll_closed(uv_handle_t* handle) {
  Inotify* self = handle->data;
  close(self->fd);
  self->poll_closed = true;
  maybe_free(self);
}

static void close_inotify(napi_env env, Inotify* self) {
  self->closed = true;
  napi_delete_reference(env, self->callback);
  napi_async_destroy(env, self->async);
  uv_poll_stop(&self->poll);
  uv_close((uv_handle_t*)&self->poll, on_poll_closed);
}

static napi_value make_event(napi_env env, const struct inotify_event* ev) {
  napi_value obj, wd, mask, cookie, name;
  napi_create_object(env, &obj);
  napi_create_int32(env, ev->wd, &wd);
  napi_create_uint32(env, ev->mask, &mask);
  napi_create_uint32(env, ev->cookie, &cookie);
  napi_create_string_utf8(env, ev->len ? ev->name : "", NAPI_AUTO_LENGTH, &name);
  napi_set_named_property(env, obj, "wd", wd);
  napi_set_named_property(env, obj, "mask", mask);
  napi_set_named_property(env, obj, "cookie", cookie);
  napi_set_named_property(env, obj, "name", name);
  return obj;
}

static void on_readable(uv_poll_t* handle, int status, int events) {
  (void)events;
  Inotify* self = handle->data;
  if (self->closed || status < 0) return;
  napi_env env = self->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value batch;
  napi_create_array(env, &batch);
  uint32_t count = 0;
  char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
  for (;;) {
    ssize_t n = read(self->fd, buf, sizeof buf);
    if (n <= 0) break;  // EAGAIN: drained
    for (char* p = buf; p < buf + n;) {
      const struct inotify_event* ev = (const struct inotify_event*)p;
      napi_set_element(env, batch, count++, make_event(env, ev));
      p += sizeof(struct inotify_event) + ev->len;
    }
  }
  if (count > 0) {
    napi_value cb, recv, result;
    napi_get_reference_value(env, self->callback, &cb);
    napi_get_global(env, &recv);  // make_callback wants an object receiver
    // make_callback drains microtasks and keeps async_hooks context, unlike call_function here.
    napi_make_callback(env, self->async, recv, cb, 1, &batch, &result);
    bool pending = false;
    napi_is_exception_pending(env, &pending);
    if (pending) {
      napi_value err;
      napi_get_and_clear_last_exception(env, &err);
      napi_fatal_exception(env, err);  // surfaces as uncaughtException, like any callback error
    }
  }
  napi_close_handle_scope(env, scope);
}

static void inotify_finalize(napi_env env, void* data, void* hint) {
  (void)hint;
  Inotify* self = data;
  if (!self->closed) close_inotify(env, self);  // dropped without inotifyClose
  self->finalized = true;
  maybe_free(self);
}

static Inotify* unwrap_inotify(napi_env env, napi_value value) {
  void* data = NULL;
  if (napi_get_value_external(env, value, &data) != napi_ok || !data) {
    napi_throw_type_error(env, NULL, "expected an inotify handle");
    return NULL;
  }
  Inotify* self = data;
  if (self->closed) {
    napi_throw_error(env, "EBADF", "inotify handle is closed");
    return NULL;
  }
  return self;
}

// inotifyInit(callback: (events) => void): handle
static napi_value inotify_init_js(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  napi_valuetype type;
  napi_typeof(env, argv[0], &type);
  if (type != napi_function) {
    napi_throw_type_error(env, NULL, "callback must be a function");
    return NULL;
  }
  int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) {
    throw_errno(env, errno, "inotify_init1", NULL);
    return NULL;
  }
  uv_loop_t* loop = NULL;
  Inotify* self = calloc(1, sizeof *self);
  if (!self || napi_get_uv_event_loop(env, &loop) != napi_ok || uv_poll_init(loop, &self->poll, fd) != 0) {
    free(self);
    close(fd);
    napi_throw_error(env, NULL, "cannot poll the inotify fd");
    return NULL;
  }
  self->env = env;
  self->fd = fd;
  self->poll.data = self;
  napi_value name, handle;
  napi_create_string_utf8(env, "envd.inotify", NAPI_AUTO_LENGTH, &name);
  napi_async_init(env, NULL, name, &self->async);
  napi_create_reference(env, argv[0], 1, &self->callback);
  uv_poll_start(&self->poll, UV_READABLE, on_readable);
  CHECK(env, napi_create_external(env, self, inotify_finalize, NULL, &handle));
  return handle;
}

// inotifyAddWatch(handle, path, mask): wd
static napi_value inotify_add_watch_js(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  if (!get_args(env, info, 3, argv)) return NULL;
  Inotify* self = unwrap_inotify(env, argv[0]);
  if (!self) return NULL;
  uint32_t mask;
  CHECK(env, napi_get_value_uint32(env, argv[2], &mask));
  char* path = get_string(env, argv[1]);
  if (!path) return NULL;
  int wd = inotify_add_watch(self->fd, path, mask);
  if (wd < 0) throw_errno(env, errno, "inotify_add_watch", path);
  free(path);
  if (wd < 0) return NULL;
  napi_value result;
  napi_create_int32(env, wd, &result);
  return result;
}

// inotifyRmWatch(handle, wd): a watch already gone (its inode deleted) is not an error.
static napi_value inotify_rm_watch_js(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!get_args(env, info, 2, argv)) return NULL;
  Inotify* self = unwrap_inotify(env, argv[0]);
  if (!self) return NULL;
  int32_t wd;
  CHECK(env, napi_get_value_int32(env, argv[1], &wd));
  if (inotify_rm_watch(self->fd, wd) < 0 && errno != EINVAL) {
    throw_errno(env, errno, "inotify_rm_watch", NULL);
  }
  return NULL;
}

// inotifyClose(handle): stops polling and closes the fd, which drops every watch.
static napi_value inotify_close_js(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  void* data = NULL;
  CHECK(env, napi_get_value_external(env, argv[0], &data));
  Inotify* self = data;
  if (self && !self->closed) close_inotify(env, self);
  return NULL;
}

// ---------------------------------------------------------------- xattr

// getxattr(path, name): Buffer | undefined (undefined when the attribute is not set)
static napi_value getxattr_js(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!get_args(env, info, 2, argv)) return NULL;
  char* path = get_string(env, argv[0]);
  if (!path) return NULL;
  char* name = get_string(env, argv[1]);
  if (!name) {
    free(path);
    return NULL;
  }
  napi_value result = NULL;
  for (;;) {
    ssize_t size = lgetxattr(path, name, NULL, 0);
    if (size < 0) {
      if (errno == ENODATA) napi_get_undefined(env, &result);
      else throw_errno(env, errno, "lgetxattr", path);
      break;
    }
    char* value = malloc(size > 0 ? (size_t)size : 1);
    if (!value) {
      napi_throw_error(env, "ENOMEM", "out of memory");
      break;
    }
    ssize_t got = lgetxattr(path, name, value, (size_t)size);
    if (got < 0 && errno == ERANGE) {
      free(value);  // grew between the two calls; ask again
      continue;
    }
    if (got < 0) throw_errno(env, errno, "lgetxattr", path);
    else napi_create_buffer_copy(env, (size_t)got, value, NULL, &result);
    free(value);
    break;
  }
  free(path);
  free(name);
  return result;
}

// setxattr(path, name, value: Buffer)
static napi_value setxattr_js(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  if (!get_args(env, info, 3, argv)) return NULL;
  void* value = NULL;
  size_t size = 0;
  if (napi_get_buffer_info(env, argv[2], &value, &size) != napi_ok) {
    napi_throw_type_error(env, NULL, "value must be a Buffer");
    return NULL;
  }
  char* path = get_string(env, argv[0]);
  if (!path) return NULL;
  char* name = get_string(env, argv[1]);
  if (name && lsetxattr(path, name, value, size, 0) < 0) throw_errno(env, errno, "lsetxattr", path);
  free(path);
  free(name);
  return NULL;
}

// The NUL-separated names llistxattr gave, as a JS array.
static napi_value xattr_names_array(napi_env env, const char* names, ssize_t length) {
  napi_value result;
  napi_create_array(env, &result);
  uint32_t i = 0;
  for (const char* p = names; p < names + length; p += strlen(p) + 1) {
    napi_value name;
    napi_create_string_utf8(env, p, NAPI_AUTO_LENGTH, &name);
    napi_set_element(env, result, i++, name);
  }
  return result;
}

// listxattr(path): string[]. One call into a buffer on the stack first: most files have no or
// few attributes, and under gVisor each system call is a round trip through the sentry; only
// a longer list is sized and read again.
static napi_value listxattr_js(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  char* path = get_string(env, argv[0]);
  if (!path) return NULL;
  napi_value result = NULL;
  char first[1024];
  ssize_t got = llistxattr(path, first, sizeof first);
  if (got >= 0) {
    result = xattr_names_array(env, first, got);
    free(path);
    return result;
  }
  if (errno != ERANGE) {
    throw_errno(env, errno, "llistxattr", path);
    free(path);
    return NULL;
  }
  for (;;) {
    ssize_t size = llistxattr(path, NULL, 0);
    if (size < 0) {
      throw_errno(env, errno, "llistxattr", path);
      break;
    }
    char* names = malloc(size > 0 ? (size_t)size : 1);
    if (!names) {
      napi_throw_error(env, "ENOMEM", "out of memory");
      break;
    }
    got = llistxattr(path, names, (size_t)size);
    if (got < 0 && errno == ERANGE) {
      free(names);
      continue;
    }
    if (got < 0) {
      throw_errno(env, errno, "llistxattr", path);
    } else {
      result = xattr_names_array(env, names, got);
    }
    free(names);
    break;
  }
  free(path);
  return result;
}

// removexattr(path, name): removing an attribute that is not set is not an error.
static napi_value removexattr_js(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!get_args(env, info, 2, argv)) return NULL;
  char* path = get_string(env, argv[0]);
  if (!path) return NULL;
  char* name = get_string(env, argv[1]);
  if (name && lremovexattr(path, name) < 0 && errno != ENODATA) throw_errno(env, errno, "lremovexattr", path);
  free(path);
  free(name);
  return NULL;
}

// ---------------------------------------------------------------- directory listings

// Fields per entry in statEntries' result (src/native/stat-entries.ts reads them).
enum { F_MODE, F_UID, F_GID, F_SIZE, F_MTIME_SEC, F_MTIME_NSEC, F_XATTRS, FIELDS };
// F_XATTRS: what llistxattr said of the entry.
enum { XATTRS_NONE, XATTRS_OURS, XATTRS_UNSUPPORTED_FS, XATTRS_ERROR };
static const char OUR_PREFIX[] = "user.e2b.";
// Never set by anyone: replacing it only probes whether the filesystem has user xattrs.
static const char XATTR_PROBE[] = "user.e2b.\177envd-probe";

// Whether the NUL-separated xattr names hold one of ours.
static bool has_our_xattr(const char* names, ssize_t len) {
  for (const char* p = names; p < names + len; p += strlen(p) + 1)
    if (strncmp(p, OUR_PREFIX, sizeof OUR_PREFIX - 1) == 0) return true;
  return false;
}

static double xattr_state(const char* path) {
  char stack[1024];
  ssize_t got = llistxattr(path, stack, sizeof stack);
  if (got >= 0) return has_our_xattr(stack, got) ? XATTRS_OURS : XATTRS_NONE;
  if (errno == ENOTSUP) return XATTRS_UNSUPPORTED_FS;  // EOPNOTSUPP is the same value on Linux
  if (errno != ERANGE) return XATTRS_ERROR;
  for (;;) {
    ssize_t size = llistxattr(path, NULL, 0);
    if (size < 0) return XATTRS_ERROR;
    char* names = malloc(size > 0 ? (size_t)size : 1);
    if (!names) return XATTRS_ERROR;
    got = llistxattr(path, names, (size_t)size);
    double state = got >= 0 ? (has_our_xattr(names, got) ? XATTRS_OURS : XATTRS_NONE) : XATTRS_ERROR;
    free(names);
    if (got < 0 && errno == ERANGE) continue;  // grew meanwhile
    return state;
  }
}

// statEntries(dir, names): a Float64Array of FIELDS numbers per name, from fstatat (a final
// symlink not followed) and llistxattr. A listing of thousands of entries otherwise pays two
// calls into Node and a stats object per entry. An entry gone meanwhile has mode 0. Sizes and
// times are exact as doubles up to 2^53 (9 PB, year 285 million).
static napi_value stat_entries_js(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!get_args(env, info, 2, argv)) return NULL;
  char* dir = get_string(env, argv[0]);
  if (!dir) return NULL;
  uint32_t count = 0;
  if (napi_get_array_length(env, argv[1], &count) != napi_ok) {
    free(dir);
    napi_throw_type_error(env, NULL, "expected an array of names");
    return NULL;
  }
  int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) {
    throw_errno(env, errno, "open", dir);
    free(dir);
    return NULL;
  }
  napi_value result = NULL;
  napi_value buffer;
  double* out = NULL;
  if (napi_create_arraybuffer(env, (size_t)count * FIELDS * sizeof(double), (void**)&out, &buffer) != napi_ok ||
      napi_create_typedarray(env, napi_float64_array, (size_t)count * FIELDS, buffer, 0, &result) != napi_ok) {
    throw_last_napi_error(env);
    result = NULL;
    goto done;
  }
  size_t dirlen = strlen(dir);
  char path[PATH_MAX];
  if (dirlen + 2 > sizeof path) {
    throw_errno(env, ENAMETOOLONG, "open", dir);
    result = NULL;
    goto done;
  }
  memcpy(path, dir, dirlen);
  if (dirlen == 0 || path[dirlen - 1] != '/') path[dirlen++] = '/';
  // A filesystem without user xattrs is not asked for each entry's: gVisor's gofer mounts
  // list none (in ~150 µs each, a round trip to the gofer) yet refuse to set any. A replace of
  // an attribute nobody sets changes nothing and tells which: ENODATA where user xattrs work,
  // ENOTSUP where they cannot exist.
  bool known_without_xattrs = false;
  dev_t without_xattrs = 0;
  struct stat dir_st;
  if (lsetxattr(dir, XATTR_PROBE, "", 0, XATTR_REPLACE) < 0 && errno == ENOTSUP && fstat(dirfd, &dir_st) == 0) {
    known_without_xattrs = true;
    without_xattrs = dir_st.st_dev;
  }
  for (uint32_t i = 0; i < count; i++) {
    double* e = out + (size_t)i * FIELDS;
    memset(e, 0, FIELDS * sizeof(double));
    napi_value name;
    size_t len = 0;
    if (napi_get_element(env, argv[1], i, &name) != napi_ok ||
        napi_get_value_string_utf8(env, name, path + dirlen, sizeof path - dirlen, &len) != napi_ok) {
      napi_throw_type_error(env, NULL, "expected an array of names");
      result = NULL;
      goto done;
    }
    if (dirlen + len + 1 >= sizeof path) continue;  // cut short: no such entry
    struct stat st;
    if (fstatat(dirfd, path + dirlen, &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
    e[F_MODE] = st.st_mode;
    e[F_UID] = st.st_uid;
    e[F_GID] = st.st_gid;
    e[F_SIZE] = (double)st.st_size;
    e[F_MTIME_SEC] = (double)st.st_mtim.tv_sec;
    e[F_MTIME_NSEC] = (double)st.st_mtim.tv_nsec;
    if (known_without_xattrs && st.st_dev == without_xattrs) {
      e[F_XATTRS] = XATTRS_UNSUPPORTED_FS;
      continue;
    }
    e[F_XATTRS] = xattr_state(path);
    if (e[F_XATTRS] == XATTRS_UNSUPPORTED_FS) {
      known_without_xattrs = true;
      without_xattrs = st.st_dev;
    }
  }
done:
  close(dirfd);
  free(dir);
  return result;
}

// ---------------------------------------------------------------- process limits

// setProcessLimit(soft, hard): RLIMIT_NPROC of this process (its children inherit it).
static napi_value set_process_limit_js(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!get_args(env, info, 2, argv)) return NULL;
  int64_t soft, hard;
  CHECK(env, napi_get_value_int64(env, argv[0], &soft));
  CHECK(env, napi_get_value_int64(env, argv[1], &hard));
  struct rlimit lim = {.rlim_cur = (rlim_t)soft, .rlim_max = (rlim_t)hard};
  if (setrlimit(RLIMIT_NPROC, &lim) < 0) throw_errno(env, errno, "setrlimit(RLIMIT_NPROC)", NULL);
  return NULL;
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  napi_property_descriptor props[] = {
      {"inotifyInit", NULL, inotify_init_js, NULL, NULL, NULL, napi_enumerable, NULL},
      {"inotifyAddWatch", NULL, inotify_add_watch_js, NULL, NULL, NULL, napi_enumerable, NULL},
      {"inotifyRmWatch", NULL, inotify_rm_watch_js, NULL, NULL, NULL, napi_enumerable, NULL},
      {"inotifyClose", NULL, inotify_close_js, NULL, NULL, NULL, napi_enumerable, NULL},
      {"getxattr", NULL, getxattr_js, NULL, NULL, NULL, napi_enumerable, NULL},
      {"setxattr", NULL, setxattr_js, NULL, NULL, NULL, napi_enumerable, NULL},
      {"listxattr", NULL, listxattr_js, NULL, NULL, NULL, napi_enumerable, NULL},
      {"removexattr", NULL, removexattr_js, NULL, NULL, NULL, napi_enumerable, NULL},
      {"statEntries", NULL, stat_entries_js, NULL, NULL, NULL, napi_enumerable, NULL},
      {"setProcessLimit", NULL, set_process_limit_js, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  if (napi_define_properties(env, exports, sizeof props / sizeof props[0], props) != napi_ok) return NULL;
  return exports;
}
