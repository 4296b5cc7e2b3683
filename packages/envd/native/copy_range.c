// Zero-copy append of one file to another for `POST /files/compose`, plain C against
// Node-API. Node has no copy_file_range binding (fs.copyFile always starts at offset 0 of
// a truncated destination), so this copies from the source fd's offset to the destination
// fd's offset on a libuv worker thread and resolves a Promise with the byte count.
#define _GNU_SOURCE
#include <errno.h>
#include <node_api.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <unistd.h>

// Per-call ceiling; both syscalls copy at most ~2 GiB at once anyway.
#define CHUNK ((size_t)1 << 30)

typedef struct {
  int in_fd;
  int out_fd;
  int64_t copied;
  int err;
  napi_deferred deferred;
  napi_async_work work;
} copy_job;

// How bytes move, tried in order: copy_file_range shares or copies extents inside the
// filesystem; sendfile(2) still copies inside the kernel across filesystems; read/write is
// for pseudo-files (procfs, sysfs) that support neither.
enum copy_mode { MODE_COPY_FILE_RANGE, MODE_SENDFILE, MODE_READ_WRITE };

// Errnos meaning "this mode cannot do this pair" rather than an I/O failure: different
// filesystems (EXDEV, kernels >= 5.19), no support (ENOSYS, EOPNOTSUPP), or a file kind
// the syscall refuses (EINVAL).
static bool unsupported(int err) {
  return err == EXDEV || err == ENOSYS || err == EOPNOTSUPP || err == ENOTSUP || err == EINVAL;
}

static ssize_t read_write(int in_fd, int out_fd) {
  static __thread char buf[64 * 1024];
  ssize_t n = read(in_fd, buf, sizeof buf);
  if (n <= 0) return n;
  for (ssize_t done = 0; done < n;) {
    ssize_t w = write(out_fd, buf + done, (size_t)(n - done));
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    done += w;
  }
  return n;
}

static void execute(napi_env env, void* data) {
  copy_job* job = data;
  enum copy_mode mode = MODE_COPY_FILE_RANGE;
  for (;;) {
    ssize_t n;
    switch (mode) {
      case MODE_COPY_FILE_RANGE:
        n = copy_file_range(job->in_fd, NULL, job->out_fd, NULL, CHUNK, 0);
        break;
      case MODE_SENDFILE:
        n = sendfile(job->out_fd, job->in_fd, NULL, CHUNK);
        break;
      default:
        n = read_write(job->in_fd, job->out_fd);
    }
    if (n > 0) {
      job->copied += n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    // Pseudo-files report size 0 and the in-kernel paths return 0 for them, so an
    // immediate EOF is confirmed by the next mode before it is believed.
    bool fall_back = job->copied == 0 && mode != MODE_READ_WRITE && (n == 0 || unsupported(errno));
    if (fall_back) {
      mode++;
      continue;
    }
    if (n < 0) job->err = errno;
    return;
  }
}

static void complete(napi_env env, napi_status status, void* data) {
  copy_job* job = data;
  napi_value result;
  if (status != napi_ok) {
    napi_value msg;
    napi_create_string_utf8(env, "copy_file_range job was cancelled", NAPI_AUTO_LENGTH, &msg);
    napi_create_error(env, NULL, msg, &result);
    napi_reject_deferred(env, job->deferred, result);
  } else if (job->err != 0) {
    napi_value msg, errno_value;
    napi_create_string_utf8(env, strerror(job->err), NAPI_AUTO_LENGTH, &msg);
    napi_create_error(env, NULL, msg, &result);
    // The JS side turns the number into Node's `code` (ENOSPC, ...) via os.constants.errno.
    napi_create_int32(env, job->err, &errno_value);
    napi_set_named_property(env, result, "errno", errno_value);
    napi_reject_deferred(env, job->deferred, result);
  } else {
    napi_create_double(env, (double)job->copied, &result);
    napi_resolve_deferred(env, job->deferred, result);
  }
  napi_delete_async_work(env, job->work);
  free(job);
}

// copyFileRange(inFd, outFd): Promise<number> — appends everything from inFd's offset to EOF.
static napi_value copy_file_range_js(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) {
    napi_throw_type_error(env, NULL, "copyFileRange(inFd, outFd) needs two file descriptors");
    return NULL;
  }
  int32_t in_fd, out_fd;
  if (napi_get_value_int32(env, argv[0], &in_fd) != napi_ok || napi_get_value_int32(env, argv[1], &out_fd) != napi_ok) {
    napi_throw_type_error(env, NULL, "file descriptors must be integers");
    return NULL;
  }
  copy_job* job = calloc(1, sizeof *job);
  if (!job) {
    napi_throw_error(env, "ENOMEM", "out of memory");
    return NULL;
  }
  job->in_fd = in_fd;
  job->out_fd = out_fd;
  napi_value promise, name;
  if (napi_create_promise(env, &job->deferred, &promise) != napi_ok ||
      napi_create_string_utf8(env, "envd.copyFileRange", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, execute, complete, job, &job->work) != napi_ok ||
      napi_queue_async_work(env, job->work) != napi_ok) {
    free(job);
    napi_throw_error(env, NULL, "cannot queue copy_file_range job");
    return NULL;
  }
  return promise;
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  napi_property_descriptor props[] = {
      {"copyFileRange", NULL, copy_file_range_js, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  if (napi_define_properties(env, exports, 1, props) != napi_ok) return NULL;
  return exports;
}
