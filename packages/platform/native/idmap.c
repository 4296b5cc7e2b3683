// The mounts of a runc sandbox that runs in a user namespace, plain C against Node-API. Node has
// no binding for the new mount API (open_tree, mount_setattr, fsopen, fsconfig, fsmount,
// move_mount), for setns, or for a thread's own fsuid.
//
// A runc sandbox's root is root only inside its user namespace (container uids 0..n-1 are host
// uids base..base+n-1), while its files stay unshifted on disk (root's files are uid 0 in the
// layers, whichever runtime boots them next). The kernel translates between the two through
// idmapped mounts: each layer and the sandbox's disk are cloned with the namespace's mapping
// attached, and the overlay is assembled from those clones (overlayfs itself cannot be
// idmapped, but it accepts idmapped layers, given as file descriptors).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <node_api.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "napi_errors.h"

#ifndef __WALL
#define __WALL 0x40000000
#endif
// <sys/mount.h> and <linux/mount.h> clash in this glibc: umount2's flags by value
#define X_MNT_DETACH 2
#define X_UMOUNT_NOFOLLOW 8


// A JS string as a malloc'd C string; NULL (with a TypeError thrown) when it is not one or
// holds a NUL (which would name another path than the one checked).
static char* get_string(napi_env env, napi_value v) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected a string");
    return NULL;
  }
  char* s = malloc(len + 1);
  if (!s) {
    napi_throw_error(env, "ENOMEM", "out of memory");
    return NULL;
  }
  napi_get_value_string_utf8(env, v, s, len + 1, &len);
  if (strlen(s) != len) {
    free(s);
    napi_throw_type_error(env, NULL, "a string with a NUL byte");
    return NULL;
  }
  return s;
}

static bool get_u32(napi_env env, napi_value v, uint32_t* out) {
  if (napi_get_value_uint32(env, v, out) == napi_ok) return true;
  napi_throw_type_error(env, NULL, "expected an unsigned 32-bit number");
  return false;
}

static bool get_i32(napi_env env, napi_value v, int32_t* out) {
  if (napi_get_value_int32(env, v, out) == napi_ok) return true;
  napi_throw_type_error(env, NULL, "expected a number");
  return false;
}

static bool get_bool(napi_env env, napi_value v, bool* out) {
  if (napi_get_value_bool(env, v, out) == napi_ok) return true;
  napi_throw_type_error(env, NULL, "expected a boolean");
  return false;
}

static napi_value named(napi_env env, napi_value obj, const char* name) {
  napi_value v = NULL;
  napi_get_named_property(env, obj, name, &v);
  return v;
}

// ---- user namespaces ----------------------------------------------------------------------

// The holder of a new user namespace: it only has to exist while its maps are written and the
// namespace is opened. It shares our memory (no copy of Node's address space) and runs with
// every signal blocked, so nothing of Node's (signal handlers) ever runs in it.
static int hold(void* arg) {
  (void)arg;
  for (;;) pause();
  return 0;
}

static int write_file(const char* path, const char* text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = write(fd, text, strlen(text));
  int err = errno;
  close(fd);
  if (n < 0) {
    errno = err;
    return -1;
  }
  return 0;
}

// userns(hostId, size): the fd of a new user namespace whose uids and gids 0..size-1 are the
// host's hostId..hostId+size-1.
static napi_value userns_js(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  uint32_t host, size;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) {
    napi_throw_type_error(env, NULL, "userns(hostId, size)");
    return NULL;
  }
  if (!get_u32(env, argv[0], &host) || !get_u32(env, argv[1], &size)) return NULL;
  if (size == 0 || (uint64_t)host + size > UINT32_MAX) {
    napi_throw_range_error(env, NULL, "the host range does not fit in 32 bits");
    return NULL;
  }
  const size_t stack_size = 64 * 1024;
  void* stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) {
    throw_errno_detail(env, errno, "mmap", "", NULL);
    return NULL;
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  // exit signal 0: no SIGCHLD for Node's handler; reaped below with __WALL
  int pid = clone(hold, (char*)stack + stack_size, CLONE_VM | CLONE_NEWUSER, NULL);
  int clone_err = errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (pid < 0) {
    munmap(stack, stack_size);
    throw_errno_detail(env, clone_err, "clone", "", "a new user namespace");
    return NULL;
  }
  char path[64], map[64];
  snprintf(map, sizeof map, "0 %u %u\n", host, size);
  int fd = -1, err = 0;
  const char* step = "";
  snprintf(path, sizeof path, "/proc/%d/uid_map", pid);
  if (write_file(path, map) < 0) {
    err = errno;
    step = "uid_map";
  }
  if (!err) {
    snprintf(path, sizeof path, "/proc/%d/gid_map", pid);
    if (write_file(path, map) < 0) {
      err = errno;
      step = "gid_map";
    }
  }
  if (!err) {
    snprintf(path, sizeof path, "/proc/%d/ns/user", pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      err = errno;
      step = "open";
    }
  }
  kill(pid, SIGKILL);
  while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR) {
  }
  munmap(stack, stack_size);
  if (err) {
    throw_errno_detail(env, err, step, path, NULL);
    return NULL;
  }
  napi_value result;
  napi_create_int32(env, fd, &result);
  return result;
}

// ---- idmapped clones ----------------------------------------------------------------------

// A detached clone of the mount at `path` (that directory as its root) with the user
// namespace's mapping attached and `attrs` set, nosuid and nodev always.
static int idmapped_clone(const char* path, int userns_fd, uint64_t attrs, const char** step) {
  int fd = (int)syscall(SYS_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
  if (fd < 0) {
    *step = "open_tree";
    return -1;
  }
  struct mount_attr attr = {
      .attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | attrs,
      .userns_fd = (uint64_t)userns_fd,
  };
  if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) {
    int err = errno;
    close(fd);
    errno = err;
    *step = "mount_setattr";
    return -1;
  }
  return fd;
}

static int attach(int mnt_fd, const char* target) {
  return (int)syscall(SYS_move_mount, mnt_fd, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH);
}

// idmappedBind(source, target, usernsFd, readonly): `source` shown at `target` through the
// namespace's mapping (a volume a runc sandbox binds).
static napi_value idmapped_bind_js(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4) {
    napi_throw_type_error(env, NULL, "idmappedBind(source, target, usernsFd, readonly)");
    return NULL;
  }
  int32_t userns;
  bool readonly;
  if (!get_i32(env, argv[2], &userns) || !get_bool(env, argv[3], &readonly)) return NULL;
  char* source = get_string(env, argv[0]);
  if (!source) return NULL;
  char* target = get_string(env, argv[1]);
  if (!target) {
    free(source);
    return NULL;
  }
  const char* step = "";
  int fd = idmapped_clone(source, userns, readonly ? MOUNT_ATTR_RDONLY : 0, &step);
  if (fd < 0) {
    throw_errno_detail(env, errno, step, source, NULL);
  } else if (attach(fd, target) < 0) {
    throw_errno_detail(env, errno, "move_mount", target, NULL);
  }
  if (fd >= 0) close(fd);
  free(source);
  free(target);
  return NULL;
}

// ---- the overlay --------------------------------------------------------------------------

struct overlay_job {
  const int* lowers;
  size_t nlowers;
  int upper, work;
  // set: mount(2) with these options at `target` instead (kernels before 6.8 take layers by path only)
  const char* data;
  const char* target;
  uint32_t host_id;
  uint64_t attrs;
  int mnt;
  int err;
  const char* step;
  char log[1024];
};

// The creator's credentials: fsuid/fsgid the namespace's root, root's capabilities kept (a
// change of fsuid drops the file capabilities from the effective set: raised again from the
// permitted one).
static int become_namespace_root(struct overlay_job* job) {
  syscall(SYS_setfsgid, job->host_id);
  syscall(SYS_setfsuid, job->host_id);
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct caps[2];
  if (syscall(SYS_capget, &header, caps) < 0) {
    job->step = "capget";
    return -1;
  }
  caps[0].effective = caps[0].permitted;
  caps[1].effective = caps[1].permitted;
  if (syscall(SYS_capset, &header, caps) < 0) {
    job->step = "capset";
    return -1;
  }
  return 0;
}

// The overlay's own operations (its work dir, whiteouts, copy-up) run with the credentials of
// whoever created it. Created as host root, they would write uid 0 through the idmapped upper
// layer, which the mapping cannot express (EOVERFLOW); so it is created by a thread with the
// namespace root's fsuid, which ends afterwards: nothing else ever runs with those credentials.
static void* overlay_thread(void* arg) {
  struct overlay_job* job = arg;
  if (become_namespace_root(job) < 0) {
    job->err = errno;
    return NULL;
  }
  if (job->data) {
    unsigned long flags = MS_NODEV | ((job->attrs & MOUNT_ATTR_NOSUID) ? MS_NOSUID : 0);
    if (syscall(SYS_mount, "overlay", job->target, "overlay", flags, job->data) < 0) {
      job->err = errno;
      job->step = "mount overlay";
    }
    return NULL;
  }
  int fs = (int)syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
  if (fs < 0) {
    job->err = errno;
    job->step = "fsopen";
    return NULL;
  }
  int failed = 0;
  // topmost first, as lowerdir= lists them
  for (size_t i = 0; i < job->nlowers && !failed; i++) {
    if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_FD, "lowerdir+", NULL, job->lowers[i]) < 0) {
      failed = 1;
      job->step = "fsconfig lowerdir+";
    }
  }
  if (!failed && syscall(SYS_fsconfig, fs, FSCONFIG_SET_FD, "upperdir", NULL, job->upper) < 0) {
    failed = 1;
    job->step = "fsconfig upperdir";
  }
  if (!failed && syscall(SYS_fsconfig, fs, FSCONFIG_SET_FD, "workdir", NULL, job->work) < 0) {
    failed = 1;
    job->step = "fsconfig workdir";
  }
  if (!failed && syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
    failed = 1;
    job->step = "fsconfig create";
  }
  if (!failed) {
    job->mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, job->attrs);
    if (job->mnt < 0) {
      failed = 1;
      job->step = "fsmount";
    }
  }
  if (failed) {
    job->err = errno;
    // the overlay says why in the context's log ("e overlayfs: ..." lines)
    size_t used = 0;
    ssize_t n;
    while (used < sizeof job->log - 2 && (n = read(fs, job->log + used, sizeof job->log - 2 - used)) > 0) {
      used += (size_t)n;
      job->log[used++] = ';';
    }
    job->log[used] = 0;
  }
  close(fs);
  return NULL;
}

static int run_thread(void* (*fn)(void*), void* job) {
  pthread_t thread;
  int err = pthread_create(&thread, NULL, fn, job);
  if (err) return err;
  return pthread_join(thread, NULL);
}

// Before 6.8 overlayfs takes its layers by path only: the clones are attached under `scratch`
// (scratch/0, 1, … and scratch/disk), the overlay is mounted over those paths, and the clones
// are detached again (the overlay keeps private references to them).
static int overlay_by_paths(napi_env env, struct overlay_job* job, const int* fds, size_t n, int disk_fd,
                            const char* scratch, const char* upper, const char* work) {
  size_t cap = 4096;  // mount(2) takes one page of options
  char* data = malloc(cap);
  char (*points)[512] = calloc(n + 1, sizeof *points);
  size_t attached = 0;
  int ok = 0;
  if (!data || !points) {
    throw_errno_detail(env, ENOMEM, "malloc", scratch, NULL);
    goto out;
  }
  if (mkdir(scratch, 0700) < 0 && errno != EEXIST) {
    throw_errno_detail(env, errno, "mkdir", scratch, NULL);
    goto out;
  }
  size_t used = (size_t)snprintf(data, cap, "lowerdir=");
  for (size_t i = 0; i <= n; i++) {
    if (i < n) snprintf(points[i], sizeof points[i], "%s/%zu", scratch, i);
    else snprintf(points[i], sizeof points[i], "%s/disk", scratch);
    if (mkdir(points[i], 0700) < 0 && errno != EEXIST) {
      throw_errno_detail(env, errno, "mkdir", points[i], NULL);
      goto out;
    }
    if (attach(i < n ? fds[i] : disk_fd, points[i]) < 0) {
      throw_errno_detail(env, errno, "move_mount", points[i], NULL);
      goto out;
    }
    attached = i + 1;
    if (i < n) used += (size_t)snprintf(data + used, used < cap ? cap - used : 0, "%s%s", i ? ":" : "", points[i]);
  }
  used += (size_t)snprintf(data + used, used < cap ? cap - used : 0, ",upperdir=%s/%s,workdir=%s/%s", points[n],
                           upper, points[n], work);
  if (used >= cap) {
    throw_errno_detail(env, E2BIG, "mount overlay", job->target, "too many layers for one overlay mount");
    goto out;
  }
  job->data = data;
  int err = run_thread(overlay_thread, job);
  if (err) throw_errno_detail(env, err, "pthread_create", job->target, NULL);
  else if (job->err) throw_errno_detail(env, job->err, job->step, job->target, data);
  else ok = 1;
out:
  for (size_t i = 0; i < attached; i++) syscall(SYS_umount2, points[i], X_UMOUNT_NOFOLLOW | X_MNT_DETACH);
  if (points)
    for (size_t i = 0; i <= n; i++)
      if (points[i][0]) rmdir(points[i]);
  rmdir(scratch);
  free(points);
  free(data);
  return ok ? 0 : -1;
}

// idmappedOverlay({ lowers, disk, upper, work, target, scratch, usernsFd, hostId, suid, byPath }):
// an overlay of the layers (topmost first) over `upper` and `work` (directories of the mount or
// directory `disk`), all seen through the namespace's mapping, attached at `target`. nodev
// always; set-id bits work only with `suid` (the sandbox's own root, reachable by the sandbox's
// root alone). Layers go as file descriptors where the kernel takes them, else by path under
// `scratch` (always with `byPath`).
static napi_value idmapped_overlay_js(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value o;
  if (napi_get_cb_info(env, info, &argc, &o, NULL, NULL) != napi_ok || argc < 1) {
    napi_throw_type_error(env, NULL, "idmappedOverlay(options)");
    return NULL;
  }
  int32_t userns;
  uint32_t host_id, nlowers;
  bool suid, by_path = false;
  napi_value lowers = named(env, o, "lowers");
  napi_value by_path_v = named(env, o, "byPath");
  napi_valuetype by_path_type = napi_undefined;
  if (by_path_v) napi_typeof(env, by_path_v, &by_path_type);
  if (!get_i32(env, named(env, o, "usernsFd"), &userns) || !get_u32(env, named(env, o, "hostId"), &host_id) ||
      !get_bool(env, named(env, o, "suid"), &suid) ||
      (by_path_type != napi_undefined && !get_bool(env, by_path_v, &by_path)))
    return NULL;
  if (napi_get_array_length(env, lowers, &nlowers) != napi_ok || nlowers == 0 || nlowers > 500) {
    napi_throw_type_error(env, NULL, "lowers: 1 to 500 layer paths");
    return NULL;
  }
  char* disk = get_string(env, named(env, o, "disk"));
  char* upper = disk ? get_string(env, named(env, o, "upper")) : NULL;
  char* work = upper ? get_string(env, named(env, o, "work")) : NULL;
  char* target = work ? get_string(env, named(env, o, "target")) : NULL;
  char* scratch = target ? get_string(env, named(env, o, "scratch")) : NULL;
  int* fds = calloc(nlowers, sizeof(int));
  int disk_fd = -1, upper_fd = -1, work_fd = -1;
  size_t opened = 0;
  if (!scratch || !fds) goto out;
  const char* step = "";
  for (; opened < nlowers; opened++) {
    napi_value v;
    napi_get_element(env, lowers, (uint32_t)opened, &v);
    char* lower = get_string(env, v);
    if (!lower) goto out;
    fds[opened] = idmapped_clone(lower, userns, 0, &step);
    if (fds[opened] < 0) {
      throw_errno_detail(env, errno, step, lower, "an idmapped clone of a layer");
      free(lower);
      goto out;
    }
    free(lower);
  }
  disk_fd = idmapped_clone(disk, userns, 0, &step);
  if (disk_fd < 0) {
    throw_errno_detail(env, errno, step, disk, "an idmapped clone of the sandbox's disk");
    goto out;
  }
  // the names are the platform's, but what is below them is the tenant's: never a link
  upper_fd = openat(disk_fd, upper, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (upper_fd < 0) {
    throw_errno_detail(env, errno, "openat", upper, "the upper layer");
    goto out;
  }
  work_fd = openat(disk_fd, work, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (work_fd < 0) {
    throw_errno_detail(env, errno, "openat", work, "the overlay's work dir");
    goto out;
  }
  struct overlay_job job = {
      .lowers = fds,
      .nlowers = nlowers,
      .upper = upper_fd,
      .work = work_fd,
      .target = target,
      .host_id = host_id,
      .attrs = MOUNT_ATTR_NODEV | (suid ? 0 : MOUNT_ATTR_NOSUID),
      .mnt = -1,
  };
  if (!by_path) {
    int err = run_thread(overlay_thread, &job);
    if (err) {
      throw_errno_detail(env, err, "pthread_create", target, NULL);
      goto out;
    }
    // "lowerdir+" is 6.8's: an older kernel answers EINVAL for the parameter
    by_path = job.err == EINVAL && strcmp(job.step, "fsconfig lowerdir+") == 0;
    if (job.err && !by_path) {
      throw_errno_detail(env, job.err, job.step, target, job.log);
      goto out;
    }
    if (!job.err) {
      if (attach(job.mnt, target) < 0) throw_errno_detail(env, errno, "move_mount", target, NULL);
      close(job.mnt);
      goto out;
    }
    job.err = 0;
    job.step = "";
  }
  overlay_by_paths(env, &job, fds, nlowers, disk_fd, scratch, upper, work);
out:
  for (size_t i = 0; i < opened; i++) close(fds[i]);
  if (disk_fd >= 0) close(disk_fd);
  if (upper_fd >= 0) close(upper_fd);
  if (work_fd >= 0) close(work_fd);
  free(fds);
  free(disk);
  free(upper);
  free(work);
  free(target);
  free(scratch);
  return NULL;
}

// ---- what is made in the sandbox's network namespace --------------------------------------

struct netns_job {
  const char* netns;
  // sysfs: mounted, read-only
  bool sysfs;
  int mnt;
  // or sysctls: "name=value" under /proc/sys/net, NULL-terminated
  char** sysctls;
  int err;
  const char* step;
  const char* what;
};

// A thread joins the network namespace (setns changes only the calling thread's) and ends
// afterwards: Node's threads never leave the host's.
static void* netns_thread(void* arg) {
  struct netns_job* job = arg;
  job->what = job->netns;
  int ns = open(job->netns, O_RDONLY | O_CLOEXEC);
  if (ns < 0) {
    job->err = errno;
    job->step = "open";
    return NULL;
  }
  int joined = setns(ns, CLONE_NEWNET);
  job->err = errno;
  close(ns);
  if (joined < 0) {
    job->step = "setns";
    return NULL;
  }
  job->err = 0;
  if (job->sysfs) {
    // sysfs shows the network devices of the namespace its mounter is in
    int fs = (int)syscall(SYS_fsopen, "sysfs", FSOPEN_CLOEXEC);
    if (fs < 0) {
      job->err = errno;
      job->step = "fsopen sysfs";
      return NULL;
    }
    if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
      job->err = errno;
      job->step = "fsconfig create";
    } else {
      job->mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
                              MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
      if (job->mnt < 0) {
        job->err = errno;
        job->step = "fsmount";
      }
    }
    close(fs);
    return NULL;
  }
  for (char** s = job->sysctls; *s; s++) {
    char* eq = strchr(*s, '=');
    *eq = 0;
    char path[256];
    snprintf(path, sizeof path, "/proc/sys/net/%s", *s);
    for (char* c = path + strlen("/proc/sys/net/"); *c; c++)
      if (*c == '.') *c = '/';
    int rc = write_file(path, eq + 1);
    *eq = '=';
    if (rc < 0) {
      job->err = errno;
      job->step = "write";
      job->what = *s;
      return NULL;
    }
  }
  return NULL;
}

// sysfsInNetns(netnsPath, target): a read-only sysfs of that network namespace at `target`.
static napi_value sysfs_in_netns_js(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) {
    napi_throw_type_error(env, NULL, "sysfsInNetns(netnsPath, target)");
    return NULL;
  }
  char* netns = get_string(env, argv[0]);
  if (!netns) return NULL;
  char* target = get_string(env, argv[1]);
  if (!target) {
    free(netns);
    return NULL;
  }
  struct netns_job job = {.netns = netns, .sysfs = true, .mnt = -1};
  int err = run_thread(netns_thread, &job);
  if (err) {
    throw_errno_detail(env, err, "pthread_create", netns, NULL);
  } else if (job.err) {
    throw_errno_detail(env, job.err, job.step, job.what, NULL);
  } else if (attach(job.mnt, target) < 0) {
    throw_errno_detail(env, errno, "move_mount", target, NULL);
  }
  if (job.mnt >= 0) close(job.mnt);
  free(netns);
  free(target);
  return NULL;
}

// netSysctlsInNetns(netnsPath, ["ipv4.ping_group_range=0 1", ...]): writes net.* sysctls of
// that network namespace.
static napi_value net_sysctls_in_netns_js(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  uint32_t n;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2 ||
      napi_get_array_length(env, argv[1], &n) != napi_ok || n > 64) {
    napi_throw_type_error(env, NULL, "netSysctlsInNetns(netnsPath, settings)");
    return NULL;
  }
  char* netns = get_string(env, argv[0]);
  if (!netns) return NULL;
  char** sysctls = calloc(n + 1, sizeof(char*));
  bool ok = sysctls != NULL;
  for (uint32_t i = 0; ok && i < n; i++) {
    napi_value v;
    napi_get_element(env, argv[1], i, &v);
    sysctls[i] = get_string(env, v);
    if (!sysctls[i]) ok = false;
    else if (!strchr(sysctls[i], '=') || strstr(sysctls[i], "..") || strchr(sysctls[i], '/')) {
      napi_throw_type_error(env, NULL, "a setting is name=value, its name dotted under net.");
      ok = false;
    }
  }
  if (ok) {
    struct netns_job job = {.netns = netns, .sysctls = sysctls, .mnt = -1};
    int err = run_thread(netns_thread, &job);
    if (err) throw_errno_detail(env, err, "pthread_create", netns, NULL);
    else if (job.err) throw_errno_detail(env, job.err, job.step, job.what, NULL);
  }
  if (sysctls)
    for (uint32_t i = 0; i < n; i++) free(sysctls[i]);
  free(sysctls);
  free(netns);
  return NULL;
}

// ---- unmounting ---------------------------------------------------------------------------

// unmount(target, detach): true when `target` was a mount point and is one no more. Busy: with
// `detach`, detached lazily (the kernel frees it when its last user goes), else EBUSY.
static napi_value unmount_js(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  bool detach;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) {
    napi_throw_type_error(env, NULL, "unmount(target, detach)");
    return NULL;
  }
  if (!get_bool(env, argv[1], &detach)) return NULL;
  char* target = get_string(env, argv[0]);
  if (!target) return NULL;
  long rc = syscall(SYS_umount2, target, X_UMOUNT_NOFOLLOW);
  if (rc < 0 && errno == EBUSY && detach) rc = syscall(SYS_umount2, target, X_UMOUNT_NOFOLLOW | X_MNT_DETACH);
  bool unmounted = rc == 0;
  if (rc < 0 && errno != EINVAL && errno != ENOENT) throw_errno_detail(env, errno, "umount2", target, NULL);
  free(target);
  napi_value result;
  napi_get_boolean(env, unmounted, &result);
  return result;
}

static void export_fn(napi_env env, napi_value exports, const char* name, napi_callback cb) {
  napi_value fn;
  napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, NULL, &fn);
  napi_set_named_property(env, exports, name, fn);
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  export_fn(env, exports, "userns", userns_js);
  export_fn(env, exports, "idmappedBind", idmapped_bind_js);
  export_fn(env, exports, "idmappedOverlay", idmapped_overlay_js);
  export_fn(env, exports, "sysfsInNetns", sysfs_in_netns_js);
  export_fn(env, exports, "netSysctlsInNetns", net_sysctls_in_netns_js);
  export_fn(env, exports, "unmount", unmount_js);
  return exports;
}
