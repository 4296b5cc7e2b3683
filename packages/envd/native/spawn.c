// envd's process creation without a fork of envd. libuv (and so Node's child_process) always
// forks on Linux: the kernel copies envd's page tables (~60 MB of Node), and gVisor copies its
// whole address space description, before the child execs. Here the child is a vfork-style
// clone (CLONE_VM | CLONE_VFORK): it borrows envd's memory for the few system calls between
// clone and execve, on a stack of its own, and envd's thread resumes once the program runs.
//
// spawn(file, argv, envp, cwd, uid, gid, stdinPipe) -> [pid, stdinFd, stdoutFd, stderrFd]
//   The child leads its own session, has every signal at its default and none blocked, runs
//   as uid/gid (when >= 0, with no supplementary groups) in cwd, with stdin a pipe or
//   /dev/null and stdout/stderr pipes. Failures before the program runs (execve's ENOENT,
//   EACCES, setuid's EAGAIN at the process limit, clone's EAGAIN...) throw an Error with the
//   errno name as `code` and `syscall` set, like Node's spawn errors.
// spawnPty(file, argv, envp, cwd, uid, gid, cols, rows) -> [pid, masterFd]
//   The same child in a new pseudo-terminal of cols x rows: the terminal is its controlling
//   one and its 0, 1 and 2; its process side is owned by uid (as login and sshd hand it
//   over). The master is envd's, close-on-exec; reading it ends in EIO once every process
//   holding the terminal has closed it.
// resizePty(masterFd, cols, rows)
//   Sets the terminal's size; its foreground process group gets SIGWINCH.
// reap(pid) -> undefined while it runs, else [exitCode, signal] (one of them -1)
//   A non-blocking waitpid for one child; libuv only ever waits for its own pids.
// onChildEnded(callback)
//   Calls back (on the loop) at each SIGCHLD, so the caller reaps its children. A libuv signal
//   watcher of its own, unreferenced: it never holds the loop open, and it does not depend on
//   a `process` object (test runners give code a copy on which signal listeners never fire).
//   It ends with its Node-API environment.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <node_api.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include <uv.h>

#include "errno-names.h"

#define CHILD_STACK_BYTES (256 * 1024)

// Everything the child needs, prepared by the parent: the child must not allocate.
struct spawn_plan {
  const char* file;
  char** argv;
  char** envp;
  const char* cwd;
  int uid;
  int gid;
  int fds[3];    // what becomes the child's 0, 1, 2
  bool terminal; // fds[0] is a terminal to make the child's controlling one
  int err;       // set by the child when it fails before execve returns control
  const char* failed;  // which step failed
};

static int child_main(void* arg) {
  struct spawn_plan* p = arg;
  // every signal back to its default (Node ignores SIGPIPE, libuv handles SIGCHLD...)
  for (int sig = 1; sig < NSIG; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    signal(sig, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (setsid() < 0) {
    p->failed = "setsid";
    goto fail;
  }
  // a session leader without a terminal takes this one as its controlling terminal
  if (p->terminal && ioctl(p->fds[0], TIOCSCTTY, 0) < 0) {
    p->failed = "ioctl(TIOCSCTTY)";
    goto fail;
  }
  for (int i = 0; i < 3; i++) {
    // the sources are close-on-exec; the copies at 0..2 are not
    if (dup2(p->fds[i], i) < 0) {
      p->failed = "dup2";
      goto fail;
    }
  }
  // Raw system calls: glibc's setuid/setgid would have every thread it knows of (envd's, as
  // the memory is envd's) change ids with it.
  if (p->gid >= 0) {
    if (syscall(SYS_setgroups, 0, NULL) < 0 && errno != EPERM) {
      p->failed = "setgroups";
      goto fail;
    }
    if (syscall(SYS_setgid, p->gid) < 0) {
      p->failed = "setgid";
      goto fail;
    }
  }
  if (p->uid >= 0 && syscall(SYS_setuid, p->uid) < 0) {
    p->failed = "setuid";
    goto fail;
  }
  if (p->cwd && chdir(p->cwd) < 0) {
    p->failed = "chdir";
    goto fail;
  }
  execve(p->file, p->argv, p->envp);
  p->failed = "execve";
fail:
  p->err = errno;
  _exit(127);
}

static napi_value throw_errno(napi_env env, int err, const char* syscall, const char* file) {
  char message[512];
  snprintf(message, sizeof message, "%s %s %s: %s", syscall, errno_code(err), file ? file : "", strerror(err));
  napi_value msg, code, error, sys, errnum;
  napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &msg);
  napi_create_string_utf8(env, errno_code(err), NAPI_AUTO_LENGTH, &code);
  napi_create_error(env, code, msg, &error);
  napi_create_string_utf8(env, syscall, NAPI_AUTO_LENGTH, &sys);
  napi_set_named_property(env, error, "syscall", sys);
  napi_create_int32(env, -err, &errnum);
  napi_set_named_property(env, error, "errno", errnum);
  napi_throw(env, error);
  return NULL;
}

static napi_value throw_type(napi_env env, const char* message) {
  napi_throw_type_error(env, NULL, message);
  return NULL;
}

// A JS string as a malloc'd C string (NULL on failure, an exception then pending).
static char* string_arg(napi_env env, napi_value value) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &len) != napi_ok) return NULL;
  char* out = malloc(len + 1);
  if (!out) return NULL;
  napi_get_value_string_utf8(env, value, out, len + 1, &len);
  if (strlen(out) != len) {  // an embedded NUL would cut the string short
    free(out);
    return NULL;
  }
  return out;
}

static void free_list(char** list) {
  if (!list) return;
  for (char** s = list; *s; s++) free(*s);
  free(list);
}

// A JS array of strings as a NULL-terminated, malloc'd list.
static char** list_arg(napi_env env, napi_value array) {
  uint32_t n = 0;
  if (napi_get_array_length(env, array, &n) != napi_ok) return NULL;
  char** list = calloc(n + 1, sizeof(char*));
  if (!list) return NULL;
  for (uint32_t i = 0; i < n; i++) {
    napi_value item;
    napi_get_element(env, array, i, &item);
    list[i] = string_arg(env, item);
    if (!list[i]) {
      free_list(list);
      return NULL;
    }
  }
  return list;
}

static void close_all(int* fds, int n) {
  for (int i = 0; i < n; i++)
    if (fds[i] >= 0) close(fds[i]);
}

// What both spawns take first: file, argv, envp, cwd, uid, gid.
struct spawn_args {
  char* file;
  char* cwd;
  char** argv;
  char** envp;
  int32_t uid;
  int32_t gid;
};

static void free_args(struct spawn_args* a) {
  free(a->file);
  free(a->cwd);
  free_list(a->argv);
  free_list(a->envp);
}

// Reads args[0..5]; false (a TypeError pending) when one is not usable.
static bool parse_args(napi_env env, napi_value* args, struct spawn_args* a) {
  a->file = string_arg(env, args[0]);
  a->cwd = string_arg(env, args[3]);
  a->argv = list_arg(env, args[1]);
  a->envp = list_arg(env, args[2]);
  a->uid = a->gid = -1;
  napi_get_value_int32(env, args[4], &a->uid);
  napi_get_value_int32(env, args[5], &a->gid);
  if (a->file && a->cwd && a->argv && a->envp) return true;
  throw_type(env, "spawn: file, cwd, argv and envp must be strings without NUL bytes");
  return false;
}

// The child's 0..2 are copied from envd's fds: none may already be one of 0..2 (a closed
// stdio of envd's), or a dup2 would clobber another. False (an error thrown) when one cannot move.
static bool all_above_stdio(napi_env env, int* fds, int n) {
  for (int i = 0; i < n; i++) {
    if (fds[i] < 0 || fds[i] >= 3) continue;
    int moved = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
    if (moved < 0) {
      throw_errno(env, errno, "fcntl", NULL);
      return false;
    }
    close(fds[i]);
    fds[i] = moved;
  }
  return true;
}

// Starts the planned child; true with *pid set, or false with an error thrown.
static bool launch(napi_env env, struct spawn_plan* plan, pid_t* pid) {
  void* stack = mmap(NULL, CHILD_STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) {
    throw_errno(env, errno, "mmap", NULL);
    return false;
  }
  // No signal handler of envd may run in the child while it borrows envd's memory.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  *pid = clone(child_main, (char*)stack + CHILD_STACK_BYTES, CLONE_VM | CLONE_VFORK | SIGCHLD, plan);
  int clone_err = errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  munmap(stack, CHILD_STACK_BYTES);
  if (*pid < 0) {
    throw_errno(env, clone_err, "spawn", plan->file);
    return false;
  }
  if (plan->failed) {
    // the child is gone (it exited 127): collect it, report why
    int status;
    while (waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
    }
    throw_errno(env, plan->err, strcmp(plan->failed, "execve") == 0 ? "spawn" : plan->failed, plan->file);
    return false;
  }
  return true;
}

static struct spawn_plan plan_of(struct spawn_args* a) {
  return (struct spawn_plan){
      .file = a->file,
      .argv = a->argv,
      .envp = a->envp,
      .cwd = a->cwd[0] ? a->cwd : NULL,
      .uid = a->uid,
      .gid = a->gid,
  };
}

static napi_value int_array(napi_env env, const int* values, uint32_t n) {
  napi_value out, v;
  napi_create_array_with_length(env, n, &out);
  for (uint32_t i = 0; i < n; i++) {
    napi_create_int32(env, values[i], &v);
    napi_set_element(env, out, i, v);
  }
  return out;
}

static napi_value spawn_js(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value args[7];
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  if (argc < 7) return throw_type(env, "spawn(file, argv, envp, cwd, uid, gid, stdinPipe)");

  struct spawn_args a = {0};
  bool stdin_pipe = false;
  napi_get_value_bool(env, args[6], &stdin_pipe);
  napi_value result = NULL;
  // [stdin read, stdin write, stdout read, stdout write, stderr read, stderr write]
  int fds[6] = {-1, -1, -1, -1, -1, -1};
  if (!parse_args(env, args, &a)) goto done;
  if (stdin_pipe ? pipe2(&fds[0], O_CLOEXEC) < 0 : (fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
    throw_errno(env, errno, stdin_pipe ? "pipe2" : "open", "/dev/null");
    goto done;
  }
  if (pipe2(&fds[2], O_CLOEXEC) < 0 || pipe2(&fds[4], O_CLOEXEC) < 0) {
    throw_errno(env, errno, "pipe2", NULL);
    goto done;
  }
  if (!all_above_stdio(env, fds, 6)) goto done;
  struct spawn_plan plan = plan_of(&a);
  plan.fds[0] = fds[0];
  plan.fds[1] = fds[3];
  plan.fds[2] = fds[5];
  pid_t pid;
  if (!launch(env, &plan, &pid)) goto done;
  // the child's ends are its own now
  close(fds[0]);
  close(fds[3]);
  close(fds[5]);
  fds[0] = fds[3] = fds[5] = -1;
  int parent_ends[4] = {pid, stdin_pipe ? fds[1] : -1, fds[2], fds[4]};
  result = int_array(env, parent_ends, 4);
  fds[1] = fds[2] = fds[4] = -1;

done:
  close_all(fds, 6);
  free_args(&a);
  return result;
}

// A terminal's size from JS numbers (0 or less: the usual 80 x 24).
static struct winsize size_of(napi_env env, napi_value cols, napi_value rows) {
  int32_t c = 0, r = 0;
  napi_get_value_int32(env, cols, &c);
  napi_get_value_int32(env, rows, &r);
  struct winsize ws = {.ws_row = r > 0 ? (unsigned short)r : 24, .ws_col = c > 0 ? (unsigned short)c : 80};
  return ws;
}

static napi_value spawn_pty_js(napi_env env, napi_callback_info info) {
  size_t argc = 8;
  napi_value args[8];
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  if (argc < 8) return throw_type(env, "spawnPty(file, argv, envp, cwd, uid, gid, cols, rows)");

  struct spawn_args a = {0};
  napi_value result = NULL;
  int fds[2] = {-1, -1};  // [master, process side]
  char name[128];
  if (!parse_args(env, args, &a)) goto done;
  fds[0] = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fds[0] < 0) {
    throw_errno(env, errno, "posix_openpt", NULL);
    goto done;
  }
  if (grantpt(fds[0]) < 0 || unlockpt(fds[0]) < 0 || ptsname_r(fds[0], name, sizeof name) != 0) {
    throw_errno(env, errno, "unlockpt", NULL);
    goto done;
  }
  fds[1] = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fds[1] < 0) {
    throw_errno(env, errno, "open", name);
    goto done;
  }
  if (!all_above_stdio(env, fds, 2)) goto done;
  struct winsize ws = size_of(env, args[6], args[7]);
  struct termios tio;
  // UTF-8 input: a backspace erases a whole character in line editing (the sandbox's LANG)
  if (ioctl(fds[1], TIOCSWINSZ, &ws) < 0 || tcgetattr(fds[1], &tio) < 0) {
    throw_errno(env, errno, "ioctl", name);
    goto done;
  }
  tio.c_iflag |= IUTF8;
  tcsetattr(fds[1], TCSANOW, &tio);
  // the user's own terminal, as login hands it over; where the filesystem refuses, root's
  if (a.uid >= 0) (void)!fchown(fds[1], a.uid, -1);
  struct spawn_plan plan = plan_of(&a);
  plan.fds[0] = plan.fds[1] = plan.fds[2] = fds[1];
  plan.terminal = true;
  pid_t pid;
  if (!launch(env, &plan, &pid)) goto done;
  int parent_ends[2] = {pid, fds[0]};
  result = int_array(env, parent_ends, 2);
  fds[0] = -1;

done:
  close_all(fds, 2);
  free_args(&a);
  return result;
}

static napi_value resize_pty_js(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value args[3];
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  int32_t fd = -1;
  if (argc < 3 || napi_get_value_int32(env, args[0], &fd) != napi_ok || fd < 0)
    return throw_type(env, "resizePty(masterFd, cols, rows)");
  struct winsize ws = size_of(env, args[1], args[2]);
  if (ioctl(fd, TIOCSWINSZ, &ws) < 0) return throw_errno(env, errno, "ioctl", NULL);
  return NULL;
}

static napi_value reap_js(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value args[1];
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  int32_t pid = 0;
  if (argc < 1 || napi_get_value_int32(env, args[0], &pid) != napi_ok || pid <= 0)
    return throw_type(env, "reap(pid)");
  int status = 0;
  pid_t got;
  do got = waitpid(pid, &status, WNOHANG);
  while (got < 0 && errno == EINTR);
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  if (got == 0) return undefined;
  if (got < 0) return throw_errno(env, errno, "waitpid", NULL);
  int code = -1, sig = -1;
  if (WIFEXITED(status)) code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) sig = WTERMSIG(status);
  else return undefined;  // stopped or continued: still there
  napi_value out, v;
  napi_create_array_with_length(env, 2, &out);
  napi_create_int32(env, code, &v);
  napi_set_element(env, out, 0, v);
  napi_create_int32(env, sig, &v);
  napi_set_element(env, out, 1, v);
  return out;
}

// One SIGCHLD watcher per Node-API environment (a worker, or a test runner's context, has its
// own): kept as the environment's instance data, stopped and closed when the environment goes,
// so no signal ever calls into an environment that is gone.
struct child_watch {
  uv_signal_t signal;  // first: its address is the struct's (see finalize_watch)
  napi_env env;
  napi_ref callback;
  napi_async_context async;
};

static void on_sigchld(uv_signal_t* handle, int signum) {
  (void)signum;
  struct child_watch* w = handle->data;
  napi_handle_scope scope;
  if (napi_open_handle_scope(w->env, &scope) != napi_ok) return;
  napi_value cb, recv, result;
  napi_get_reference_value(w->env, w->callback, &cb);
  napi_get_global(w->env, &recv);
  napi_make_callback(w->env, w->async, recv, cb, 0, NULL, &result);
  bool pending = false;
  napi_is_exception_pending(w->env, &pending);
  if (pending) {
    napi_value err;
    napi_get_and_clear_last_exception(w->env, &err);
    napi_fatal_exception(w->env, err);
  }
  napi_close_handle_scope(w->env, scope);
}

// The environment is going (its references and async context go with it): the watcher stops
// and its handle closes. Node unloads this library before the loop finishes the close, so the
// close callback is libc's free (the handle is the struct's first member), not code of ours.
static void finalize_watch(napi_env env, void* data, void* hint) {
  (void)env;
  (void)hint;
  struct child_watch* w = data;
  uv_signal_stop(&w->signal);
  uv_close((uv_handle_t*)&w->signal, (uv_close_cb)(void (*)(void))free);
}

static napi_value on_child_ended_js(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value args[1];
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  napi_valuetype type = napi_undefined;
  if (argc < 1 || napi_typeof(env, args[0], &type) != napi_ok || type != napi_function)
    return throw_type(env, "onChildEnded(callback)");
  struct child_watch* w = NULL;
  if (napi_get_instance_data(env, (void**)&w) == napi_ok && w) {
    // a later caller in the same environment takes the watcher over
    napi_delete_reference(env, w->callback);
    napi_create_reference(env, args[0], 1, &w->callback);
    return NULL;
  }
  uv_loop_t* loop = NULL;
  w = calloc(1, sizeof *w);
  if (!w || napi_get_uv_event_loop(env, &loop) != napi_ok || uv_signal_init(loop, &w->signal) != 0) {
    free(w);
    napi_throw_error(env, NULL, "cannot watch SIGCHLD");
    return NULL;
  }
  w->env = env;
  w->signal.data = w;
  napi_value name;
  napi_create_string_utf8(env, "envd.sigchld", NAPI_AUTO_LENGTH, &name);
  napi_async_init(env, NULL, name, &w->async);
  napi_create_reference(env, args[0], 1, &w->callback);
  napi_set_instance_data(env, w, finalize_watch, NULL);
  uv_signal_start(&w->signal, on_sigchld, SIGCHLD);
  uv_unref((uv_handle_t*)&w->signal);
  return NULL;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
      {"spawn", NULL, spawn_js, NULL, NULL, NULL, napi_enumerable, NULL},
      {"spawnPty", NULL, spawn_pty_js, NULL, NULL, NULL, napi_enumerable, NULL},
      {"resizePty", NULL, resize_pty_js, NULL, NULL, NULL, napi_enumerable, NULL},
      {"reap", NULL, reap_js, NULL, NULL, NULL, napi_enumerable, NULL},
      {"onChildEnded", NULL, on_child_ended_js, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
