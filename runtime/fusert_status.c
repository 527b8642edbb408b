/* fusert_status.c -- the statuses: fusert_status_name() and a default
 * sentence for each.  Its own file, with no CUDA in it, so that the test
 * stand-ins for libfusert (tests/codegen/Inputs/fake_fusert.c,
 * tests/emu/driver/cudart_emu.c) compile the one table instead of copying it. */
#include "fusert.h"

/* Also in fusert_internal.h, which needs cuda.h; the stand-ins build this
 * file without the toolkit's headers. */
const char *fusert__status_text(fusert_status s);

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
 * (fusert_set_error); internal to the library (fusert.map). */
const char *fusert__status_text(fusert_status s)
{
    switch (s) {
#define TEXT(code, text)                                                       \
    case code: return text;
        STATUS_LIST(TEXT)
#undef TEXT
    }
    return "unknown status";
}
