/* fusert_status.c -- the statuses and the error state: fusert_status_name(),
 * a default sentence for each status, and the calling thread's last error
 * message (fusert_set_error, fusert_last_error, fusert_clear_error).  Every
 * other file of the runtime reports through it and it calls none of them,
 * so the runtime's files depend on each other without a cycle.  It has no
 * CUDA in it, so that the test stand-ins for libfusert
 * (tests/codegen/Inputs/fake_fusert.c, tests/emu/driver/cudart_emu.c)
 * compile the one table and error state instead of copying them. */
#include "fusert.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>


#define STATUS_LIST(X)                                                         \
    X(FUSERT_SUCCESS, "success")                                               \
    X(FUSERT_ERROR_INVALID_VALUE, "an argument has an invalid value")          \
    X(FUSERT_ERROR_NULL_POINTER, "a required pointer is NULL")                 \
    X(FUSERT_ERROR_SHAPE_MISMATCH, "tensor dims disagree")                     \
    X(FUSERT_ERROR_NO_DEVICE, "no CUDA driver or device")                      \
    X(FUSERT_ERROR_COMPILE, "NVRTC compilation failed")                        \
    X(FUSERT_ERROR_OUT_OF_MEMORY, "out of device memory")                      \
    X(FUSERT_ERROR_LAUNCH, "a kernel launch failed")                           \
    X(FUSERT_ERROR_CUDA, "a CUDA call failed")                                 \
    X(FUSERT_ERROR_CACHE, "kernel cache I/O failed")                           \
    X(FUSERT_ERROR_WORKSPACE_TOO_SMALL, "the workspace is too small")

const char *fusert_status_name(fusert_status s)
{
    switch (s) {
#define NAME(code, text)                                                       \
    case code: return #code;
        STATUS_LIST(NAME)
#undef NAME
    }
    return "FUSERT_ERROR_UNKNOWN";
}

/* A default sentence per status, used when a failure has no message yet
 * (fusert_set_error). */
static const char *status_text(fusert_status s)
{
    switch (s) {
#define TEXT(code, text)                                                       \
    case code: return text;
        STATUS_LIST(TEXT)
#undef TEXT
    }
    return "unknown status";
}

/* ---- the last error ------------------------------------------------------ */

#define ERROR_CAP 16384 /* NVRTC logs can be long; they are cut to fit */
static _Thread_local char last_error[ERROR_CAP];

const char *fusert_last_error(void) { return last_error; }

void fusert_clear_error(void) { last_error[0] = 0; }

fusert_status fusert_set_error(fusert_status s, const char *fmt, ...)
{
    if (!fmt || !*fmt) {
        snprintf(last_error, sizeof last_error, "%s", status_text(s));
        return s;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof last_error)
        memcpy(last_error + sizeof last_error - 16, "... (truncated)", 16);
    return s;
}
