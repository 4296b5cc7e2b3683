// The errno names envd's addons report as an Error's `code`, as Node's own system errors do,
// shared by every addon (one table). An errno not listed reads as EIO.
#ifndef ENVD_ERRNO_NAMES_H
#define ENVD_ERRNO_NAMES_H

#include <errno.h>

static const char* errno_code(int err) {
  switch (err) {
    case ENOENT: return "ENOENT";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENOTDIR: return "ENOTDIR";
    case EISDIR: return "EISDIR";
    case ENAMETOOLONG: return "ENAMETOOLONG";
    case ELOOP: return "ELOOP";
    case ENOSPC: return "ENOSPC";
    case EDQUOT: return "EDQUOT";
    case ENOTSUP: return "ENOTSUP";
    case ERANGE: return "ERANGE";
    case E2BIG: return "E2BIG";
    case EROFS: return "EROFS";
    case EINVAL: return "EINVAL";
    case EBADF: return "EBADF";
    case EMFILE: return "EMFILE";
    case ENFILE: return "ENFILE";
    case ENOMEM: return "ENOMEM";
    case ENODATA: return "ENODATA";
    case EAGAIN: return "EAGAIN";
    case ENOEXEC: return "ENOEXEC";
    case ETXTBSY: return "ETXTBSY";
    case ELIBBAD: return "ELIBBAD";
    default: return "EIO";
  }
}

#endif
