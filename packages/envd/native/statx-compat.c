/*
 * Preloaded into gVisor sandboxes: the gVisor release Debian 12 ships rejects statx() with
 * AT_NO_AUTOMOUNT (EINVAL), which coreutils 9 passes for `ls -l`, `stat` and friends. The flag
 * only matters for automount points, which sandboxes do not have, so retry without it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

typedef int (*statx_fn)(int, const char *, int, unsigned int, struct statx *);

int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *buf) {
  static statx_fn real;
  if (!real) real = (statx_fn)dlsym(RTLD_NEXT, "statx");
  int rc = real(dirfd, path, flags, mask, buf);
  if (rc == -1 && errno == EINVAL && (flags & AT_NO_AUTOMOUNT)) {
    rc = real(dirfd, path, flags & ~AT_NO_AUTOMOUNT, mask, buf);
  }
  return rc;
}
