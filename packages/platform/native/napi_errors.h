// What the platform's native helpers share: errors thrown as Node's own system errors are
// (`code` the errno's name, `errno` negative, `syscall`, `path`), so callers treat them alike.
#ifndef X_NAPI_ERRORS_H
#define X_NAPI_ERRORS_H

#include <errno.h>
#include <node_api.h>
#include <stdio.h>
#include <string.h>

// Throws that error; `detail`, when given, is added to the message after a colon.
static inline void throw_errno_detail(napi_env env, int err, const char* syscall, const char* path,
                                      const char* detail) {
  const char* name = strerrorname_np(err);
  if (!name) name = "EIO";
  char msg[4400];
  snprintf(msg, sizeof msg, "%s: %s, %s '%s'%s%s", name, strerror(err), syscall, path ? path : "",
           detail && *detail ? ": " : "", detail ? detail : "");
  napi_value code, message, error, errnum, sys, p;
  napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &code);
  napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &message);
  napi_create_error(env, code, message, &error);
  napi_create_int32(env, -err, &errnum);
  napi_create_string_utf8(env, syscall, NAPI_AUTO_LENGTH, &sys);
  napi_create_string_utf8(env, path ? path : "", NAPI_AUTO_LENGTH, &p);
  napi_set_named_property(env, error, "code", code);
  napi_set_named_property(env, error, "errno", errnum);
  napi_set_named_property(env, error, "syscall", sys);
  napi_set_named_property(env, error, "path", p);
  napi_throw(env, error);
}

#endif
