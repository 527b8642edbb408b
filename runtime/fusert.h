/* fusert.h -- the fusec runtime: statuses, NVRTC compile with an on-disk
 * cache, module load and launch, stream-ordered scratch memory, and a
 * CUDA-graph capture helper.
 *
 * Plain C (C99 and later, and C++).  No global mutable state beyond the
 * per-program module slots that generated code owns and a thread-local last
 * error message; every object has a create/destroy pair. */
#ifndef FUSERT_H
#define FUSERT_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FUSERT_VERSION_MAJOR 0
#define FUSERT_VERSION_MINOR 2 /* 2: per-kernel programs, zeroed scratch */

typedef enum fusert_status {
    FUSERT_SUCCESS = 0,
    FUSERT_ERROR_INVALID_VALUE = 1,   /* a bad argument: negative dim, ... */
    FUSERT_ERROR_NULL_POINTER = 2,    /* a required pointer was NULL */
    FUSERT_ERROR_SHAPE_MISMATCH = 3,  /* dims disagree with each other or the static ones */
    FUSERT_ERROR_NO_DEVICE = 4,       /* no CUDA driver or device */
    FUSERT_ERROR_COMPILE = 5,         /* NVRTC failed; the log is in the message */
    FUSERT_ERROR_OUT_OF_MEMORY = 6,   /* scratch for intermediates could not be had */
    FUSERT_ERROR_LAUNCH = 7,          /* a kernel launch failed */
    FUSERT_ERROR_CUDA = 8,            /* any other CUDA error */
    FUSERT_ERROR_CACHE = 9,           /* cache I/O problem (never fatal: compile goes on) */
    FUSERT_ERROR_WORKSPACE_TOO_SMALL = 10,
} fusert_status;

/* A CUDA stream (cudaStream_t or CUstream); NULL is the default stream. */
typedef void *fusert_stream;

const char *fusert_status_name(fusert_status s);   /* "FUSERT_ERROR_COMPILE" */
/* The message of the last failure on this thread ("" if none): says what
 * was wrong in words, with the values involved. */
const char *fusert_last_error(void);
/* Generated code and the runtime record failures through this. */
fusert_status fusert_set_error(fusert_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void fusert_clear_error(void);

/* ---- NVRTC target: programs embedded in generated C ------------------ */

/* One generated module: its CUDA source and kernel names.  Generated code
 * defines one `static fusert_program` per module, zero-initialised apart
 * from the fields above "runtime-owned"; the runtime fills the rest on
 * first use, per device, thread-safely.
 *
 * Two modes.  Whole module (per_kernel == 0, and every program written
 * before the field existed): the first kernel asked for on a device
 * compiles and loads the whole source, every kernel at once.  Per kernel
 * (per_kernel != 0, what fusec generates): kernel i is compiled on its own
 * first use with -DFUSERT_KERNEL=<i> added to the options and loaded as a
 * module of its own, so the source must keep only kernel i when that macro
 * is defined (fusec guards each __global__ with
 * `#if !defined(FUSERT_KERNEL) || FUSERT_KERNEL == i`).  A launch then pays
 * only for the kernel it runs, not for the module's other variants.
 * FUSERT_WHOLE_MODULE=1 in the environment forces the whole-module mode. */
#define FUSERT_MAX_DEVICES 64
typedef struct fusert_program {
    const char *name;             /* module name, for messages and the cache */
    const char *source;           /* CUDA C source */
    const char *const *kernels;   /* kernel names */
    int nkernels;
    const char *options;          /* extra NVRTC options, space separated, or NULL
                                   * (fusert_compile) */
    /* runtime-owned */
    void *modules[FUSERT_MAX_DEVICES];   /* CUmodule per device ordinal */
    void **functions[FUSERT_MAX_DEVICES];/* CUfunction[nkernels] per device */
    int lock;                      /* spin lock word */
    /* Appended for the per-kernel mode, at the end so that initialisers
     * written before stay valid: a program that leaves per_kernel zero
     * keeps the whole-module mode.  The struct grew, so objects compiled
     * against an older fusert.h must be recompiled (the source needs no
     * change) before they link with this library. */
    int per_kernel;               /* compile each kernel alone, on its first use */
    /* runtime-owned, per-kernel mode */
    void **kernel_modules[FUSERT_MAX_DEVICES];   /* CUmodule[nkernels] per device */
    void **kernel_functions[FUSERT_MAX_DEVICES]; /* CUfunction[nkernels] per device */
} fusert_program;

/* Get kernel `index` of program p for the current device, compiling (or
 * loading from the cache) on first use: the whole module, or in per-kernel
 * mode only that kernel.  *fn receives a CUfunction. */
fusert_status fusert_program_kernel(fusert_program *p, int index, void **fn);

/* Launch a CUfunction (kernel params as for cuLaunchKernel). */
fusert_status fusert_launch(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shared_bytes,
                            fusert_stream stream, void **params);

/* The thread block cluster width a kernel was compiled with (its
 * __cluster_dims__): 0 for none, or where the driver cannot say. */
fusert_status fusert_kernel_cluster_width(void *fn, int *width);

/* How many blocks of `block` threads (and shared_bytes of dynamic shared
 * memory) of a kernel one multiprocessor of the current device holds at
 * once, from the registers and shared memory it was compiled with: 0
 * where the driver cannot say. */
fusert_status fusert_kernel_blocks_per_sm(void *fn, int block, unsigned shared_bytes, int *blocks);

/* Multiprocessor count of the current device (cached per device). */
fusert_status fusert_device_sm_count(int *count);

/* The L2 cache size of the current device in bytes (cached per device). */
fusert_status fusert_device_l2_bytes(int *bytes);

/* The most shared memory, static and dynamic together, that one block of
 * the current device may use once its kernel opts in (fusert_launch does
 * that for launches past 48 KiB); cached per device. */
fusert_status fusert_device_shared_optin(int *bytes);

/* Stream-ordered scratch memory (cuMemAllocAsync / cuMemFreeAsync). */
fusert_status fusert_alloc_async(void **ptr, size_t bytes, fusert_stream stream);
fusert_status fusert_free_async(void *ptr, fusert_stream stream);
fusert_status fusert_memset_async(void *ptr, int value, size_t bytes, fusert_stream stream);

/* Device memory of at least `bytes` that is all zero where the caller's
 * next work on `stream` starts, provided all work queued there before it
 * also left it all zero.  Generated reductions keep their ticket counters
 * and atomic accumulators here: their last block puts every word back to
 * 0, so a call needs no memset.  One region per device and stream (told
 * apart by cuStreamGetId, whose ids are never reused), grown with
 * stream-ordered allocation and kept for the life of the process.
 * *ptr is NULL (with FUSERT_SUCCESS) when there is none to give: while
 * `stream` is being captured (a graph may be replayed on any stream), on a
 * driver older than CUDA 12.0, beyond FUSERT_ZEROED_STREAMS streams of a
 * device, or when the driver refuses the memory; the caller then zero-fills
 * memory of its own, as before.  Without a driver it fails as every call. */
#define FUSERT_ZEROED_STREAMS 256
fusert_status fusert_zeroed_scratch(fusert_stream stream, size_t bytes, void **ptr);

/* Device memory of at least `bytes` for work queued on `stream` after this
 * call: the generated functions keep their intermediates and partial
 * results here, so a call allocates nothing once its stream has served a
 * call as large.  One region per device and stream, as above; a larger
 * request replaces it and frees the old one behind the work already queued
 * on `stream`, so calls on one stream from several threads at once must not
 * overlap (as their results could not be ordered anyway).  *ptr is NULL
 * (with FUSERT_SUCCESS) in the same cases as fusert_zeroed_scratch; the
 * caller then allocates stream-ordered memory of its own. */
fusert_status fusert_stream_scratch(fusert_stream stream, size_t bytes, void **ptr);

/* ---- the on-disk cache ---------------------------------------------- */
/* Directory: $FUSERT_CACHE_DIR, else $XDG_CACHE_HOME/fusert, else
 * ~/.cache/fusert.  FUSERT_CACHE_DISABLE=1 turns it off.  Entries are keyed
 * by a hash of source, options, NVRTC version, driver version and arch,
 * written 0600 to a temporary file and renamed; a corrupt entry is
 * recompiled.  The folder is used only when it is the user's own (owned by
 * the effective uid, not writable by group or others, not a symbolic link),
 * and an entry only when it is a regular file of the user's; otherwise the
 * kernel is compiled and the refusal counted.  Entries past
 * $FUSERT_CACHE_MAX_MB (default 1024) are removed, least recently used
 * first. */
typedef struct fusert_cache_stats {
    uint64_t hits, misses, compiles, corrupt, write_failures;
    double compile_ms_total;
    /* The fields below follow the first layout: libfusert.so keeps an
     * entry point that fills only the fields above for programs linked
     * before they existed (fusert.map). */
    uint64_t untrusted; /* lookups refused: the folder or the entry is not the user's own */
    uint64_t evictions; /* entries removed to keep the folder under its limit */
} fusert_cache_stats;
void fusert_get_cache_stats(fusert_cache_stats *out); /* process-wide counters */

/* Compile CUDA source to CUBIN for the current device (used by the above;
 * exposed for tools and tests).  *cubin is malloc-owned.  options: NVRTC
 * options, space separated, after fusert's own (the arch, -default-device,
 * --std=c++17); -minimal is left out where the NVRTC in use predates it
 * (before 12.4), since it only makes the compile faster. */
fusert_status fusert_compile(const char *name, const char *source, const char *options,
                             void **cubin, size_t *cubin_size);

/* ---- CUDA graph capture helper ---------------------------------------- */
typedef struct fusert_graph fusert_graph;
/* Begin capturing work on `stream`; calls to generated functions on that
 * stream are recorded, not run. */
fusert_status fusert_graph_begin(fusert_stream stream);
/* End the capture and instantiate it. */
fusert_status fusert_graph_end(fusert_stream stream, fusert_graph **out);
fusert_status fusert_graph_launch(fusert_graph *g, fusert_stream stream);
void fusert_graph_destroy(fusert_graph *g);

#ifdef __cplusplus
}
#endif
#endif
