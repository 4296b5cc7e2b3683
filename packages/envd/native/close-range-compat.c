/*
 * Preloaded into gVisor sandboxes: the gVisor release Debian 12 ships rejects close_range()
 * whose last descriptor is above INT_MAX (EINVAL), and GLib (2.74) closes "every descriptor
 * from 3 up" before each exec with last = ~0U, failing the spawn ("Failed to close file
 * descriptor for child process"): XFCE could start none of its parts. Descriptors are ints, so
 * INT_MAX means the same and is accepted.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <sys/syscall.h>
#include <unistd.h>

int close_range(unsigned int first, unsigned int last, int flags) {
  if (last > INT_MAX) last = INT_MAX;
  return (int)syscall(SYS_close_range, first, last, flags);
}
