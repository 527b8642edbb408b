/* fusert.c -- lazy module loading, launch, scratch memory and the
 * CUDA-graph helper (statuses and the last error: fusert_status.c).
 *
 * State: modules live in the
 * fusert_program objects generated code owns: one slot per device ordinal
 * for a whole module, or in per-kernel mode one per device and kernel,
 * each filled once under the program's spin lock and published with a
 * release store, so the common path is one or two acquire loads (a
 * kernel's slot is written once, never changed, so a reader that sees it
 * sees the finished module); multiprocessor counts are
 * cached per device in atomic arrays, zeroed scratch under zeroed_lock.  Nothing else is global and
 * mutable.  The atomics are the GCC/Clang __atomic builtins (the C11 memory
 * model) applied to the plain fields of the public struct, whose layout the
 * header fixes for C and C++ callers alike.
 *
 * Every driver failure becomes a status plus a message naming the call and
 * the driver's error name and text; nothing here aborts or exits. */
#include "fusert_internal.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- programs: lazy compile + load per device ----------------------------- */

static void lock(int *w)
{
    while (__atomic_exchange_n(w, 1, __ATOMIC_ACQUIRE) != 0)
        while (__atomic_load_n(w, __ATOMIC_RELAXED) != 0)
            sched_yield(); /* holders compile for tens of ms: don't burn the core */
}

static void unlock(int *w) { __atomic_store_n(w, 0, __ATOMIC_RELEASE); }

/* Compile (or fetch from the cache) and load p for device dev.  Called with
 * p->lock held and the device's context current. */
static double clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Whole-module mode: every kernel of p, compiled and loaded at once. */
static fusert_status load_program(const fusert_driver *d, fusert_program *p, int dev)
{
    double t0 = clock_ms();
    void *image = NULL;
    size_t size = 0;
    fusert_status s = fusert_compile(p->name, p->source, p->options, &image, &size);
    if (s != FUSERT_SUCCESS)
        return s;
    CUmodule mod;
    CUresult r = d->ModuleLoadData(&mod, image);
    free(image);
    if (r != CUDA_SUCCESS) {
        char what[256];
        snprintf(what, sizeof what, "cuModuleLoadData(module '%s', device %d)",
                 p->name ? p->name : "?", dev);
        return fusert__cuda_error(FUSERT_ERROR_CUDA, r, what);
    }
    void **fns = calloc((size_t)p->nkernels, sizeof *fns);
    if (!fns)
        return fusert_set_error(FUSERT_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int i = 0; i < p->nkernels; i++) {
        CUfunction f;
        r = d->ModuleGetFunction(&f, mod, p->kernels[i]);
        if (r != CUDA_SUCCESS) {
            char what[512];
            snprintf(what, sizeof what, "cuModuleGetFunction(kernel '%s' of module '%s')",
                     p->kernels[i], p->name ? p->name : "?");
            free(fns);
            s = fusert__cuda_error(FUSERT_ERROR_CUDA, r, what);
            d->ModuleUnload(mod); /* else every retry would leave one loaded */
            return s;
        }
        fns[i] = f;
    }
    p->modules[dev] = mod;
    __atomic_store_n(&p->functions[dev], fns, __ATOMIC_RELEASE);
    if (fusert__verbose())
        fprintf(stderr, "fusert: module '%s' ready on device %d in %.2f ms (%d kernels)\n",
                p->name ? p->name : "?", dev, clock_ms() - t0, p->nkernels);
    return FUSERT_SUCCESS;
}

/* Per-kernel mode: device dev's CUfunction slots for p, allocated (with
 * the CUmodule slots) when the device asks for its first kernel.  Called
 * with p->lock held; NULL when out of memory. */
static void **kernel_slots(fusert_program *p, int dev)
{
    void **fns = p->kernel_functions[dev];
    if (fns)
        return fns;
    void **mods = calloc((size_t)p->nkernels, sizeof *mods);
    fns = calloc((size_t)p->nkernels, sizeof *fns);
    if (!mods || !fns) {
        free(mods);
        free(fns);
        return NULL;
    }
    p->kernel_modules[dev] = mods;
    __atomic_store_n(&p->kernel_functions[dev], fns, __ATOMIC_RELEASE);
    return fns;
}

/* Per-kernel mode: compile (or fetch from the cache) kernel `index` of p
 * alone, the source with -DFUSERT_KERNEL=<index> added to the options, and
 * load it as a module of its own on device dev.  Called with p->lock held
 * and the device's context current. */
static fusert_status load_kernel(const fusert_driver *d, fusert_program *p, int dev, int index)
{
    const char *kernel = p->kernels[index], *module = p->name ? p->name : "?";
    void **fns = kernel_slots(p, dev);
    if (!fns)
        return fusert_set_error(FUSERT_ERROR_OUT_OF_MEMORY, "out of host memory");
    double t0 = clock_ms();
    size_t n = (p->options ? strlen(p->options) : 0) + 32;
    char *options = malloc(n);
    if (!options)
        return fusert_set_error(FUSERT_ERROR_OUT_OF_MEMORY, "out of host memory");
    snprintf(options, n, "%s%s-DFUSERT_KERNEL=%d", p->options ? p->options : "",
             p->options ? " " : "", index);
    void *image = NULL;
    size_t size = 0;
    fusert_status s = fusert__compile(p->name, kernel, p->source, options, &image, &size);
    free(options);
    if (s != FUSERT_SUCCESS)
        return s;
    CUmodule mod;
    CUresult r = d->ModuleLoadData(&mod, image);
    free(image);
    char what[512];
    if (r != CUDA_SUCCESS) {
        snprintf(what, sizeof what, "cuModuleLoadData(kernel '%s' of module '%s', device %d)",
                 kernel, module, dev);
        return fusert__cuda_error(FUSERT_ERROR_CUDA, r, what);
    }
    CUfunction f;
    r = d->ModuleGetFunction(&f, mod, kernel);
    if (r != CUDA_SUCCESS) {
        snprintf(what, sizeof what, "cuModuleGetFunction(kernel '%s' of module '%s', compiled "
                 "alone with -DFUSERT_KERNEL=%d)", kernel, module, index);
        s = fusert__cuda_error(FUSERT_ERROR_CUDA, r, what);
        d->ModuleUnload(mod);
        return s;
    }
    p->kernel_modules[dev][index] = mod;
    __atomic_store_n(&fns[index], (void *)f, __ATOMIC_RELEASE);
    if (fusert__verbose())
        fprintf(stderr, "fusert: kernel '%s' (%d of %d) of module '%s' ready on device %d in "
                "%.2f ms\n", kernel, index + 1, p->nkernels, module, dev, clock_ms() - t0);
    return FUSERT_SUCCESS;
}

/* Kernel `index` of p on device dev if either mode has loaded it, else NULL.
 * Acquire loads: a slot seen non-NULL was published complete. */
static void *loaded_kernel(fusert_program *p, int dev, int index)
{
    void **fns;
    if (p->per_kernel && (fns = __atomic_load_n(&p->kernel_functions[dev], __ATOMIC_ACQUIRE))) {
        void *f = __atomic_load_n(&fns[index], __ATOMIC_ACQUIRE);
        if (f)
            return f;
    }
    fns = __atomic_load_n(&p->functions[dev], __ATOMIC_ACQUIRE);
    return fns ? fns[index] : NULL;
}

fusert_status fusert_program_kernel(fusert_program *p, int index, void **fn)
{
    if (!p || !fn)
        return fusert_set_error(FUSERT_ERROR_NULL_POINTER,
                                "fusert_program_kernel: program and fn must not be NULL");
    if (!p->source || (p->nkernels > 0 && !p->kernels))
        return fusert_set_error(FUSERT_ERROR_NULL_POINTER,
                                "program '%s' has no source or kernel list",
                                p->name ? p->name : "?");
    if (index < 0 || index >= p->nkernels)
        return fusert_set_error(FUSERT_ERROR_INVALID_VALUE,
                                "kernel index %d is out of range: module '%s' has %d kernels",
                                index, p->name ? p->name : "?", p->nkernels);
    const fusert_driver *d;
    int dev;
    fusert_status s = fusert__driver_device(&d, &dev);
    if (s != FUSERT_SUCCESS)
        return s;
    void *f = loaded_kernel(p, dev, index);
    if (!f) {
        /* One loader per program at a time; a thread that waited finds the
         * kernel loaded.  FUSERT_WHOLE_MODULE is read only here, off the
         * common path. */
        lock(&p->lock);
        f = loaded_kernel(p, dev, index);
        if (!f) {
            if (p->per_kernel && !fusert__env_flag("FUSERT_WHOLE_MODULE"))
                s = load_kernel(d, p, dev, index);
            else
                s = load_program(d, p, dev);
            f = s == FUSERT_SUCCESS ? loaded_kernel(p, dev, index) : NULL;
        }
        unlock(&p->lock);
        if (s != FUSERT_SUCCESS)
            return s;
    }
    *fn = f;
    return FUSERT_SUCCESS;
}

/* ---- launch and device queries ------------------------------------------ */

fusert_status fusert_launch(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shared_bytes,
                            fusert_stream stream, void **params)
{
    if (!fn)
        return fusert_set_error(FUSERT_ERROR_NULL_POINTER, "fusert_launch: fn is NULL");
    const fusert_driver *d = fusert__driver();
    if (!d)
        return FUSERT_ERROR_NO_DEVICE;
    CUresult r = CUDA_SUCCESS;
    /* by default a kernel takes at most 48 KiB less its static shared
     * memory dynamically, so it opts in to any dynamic shared memory first;
     * a driver without cuFuncSetAttribute launches up to 48 KiB as it is */
    if (shared_bytes > 0 && d->FuncSetAttribute)
        r = d->FuncSetAttribute((CUfunction)fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                (int)shared_bytes);
    else if (shared_bytes > 48 * 1024)
        r = CUDA_ERROR_NOT_SUPPORTED;
    if (r != CUDA_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, %u)", shared_bytes);
        return fusert__cuda_error(FUSERT_ERROR_LAUNCH, r, what);
    }
    r = d->LaunchKernel((CUfunction)fn, gx, gy, gz, bx, by, bz, shared_bytes,
                                 (CUstream)stream, params, NULL);
    if (r != CUDA_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what,
                 "cuLaunchKernel(grid %ux%ux%u, block %ux%ux%u, %u bytes shared)", gx, gy, gz,
                 bx, by, bz, shared_bytes);
        return fusert__cuda_error(FUSERT_ERROR_LAUNCH, r, what);
    }
    return FUSERT_SUCCESS;
}

fusert_status fusert_kernel_cluster_width(void *fn, int *width)
{
    if (!fn || !width)
        return fusert_set_error(FUSERT_ERROR_NULL_POINTER, "fusert_kernel_cluster_width: %s is NULL",
                                !fn ? "fn" : "width");
    *width = 0;
    const fusert_driver *d = fusert__driver();
    if (!d)
        return FUSERT_ERROR_NO_DEVICE;
    int v = 0;
    /* a driver older than clusters rejects the attribute: no clusters */
    if (d->FuncGetAttribute &&
        d->FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, (CUfunction)fn) == CUDA_SUCCESS)
        *width = v;
    return FUSERT_SUCCESS;
}

fusert_status fusert_kernel_blocks_per_sm(void *fn, int block, unsigned shared_bytes, int *blocks)
{
    if (!fn || !blocks)
        return fusert_set_error(FUSERT_ERROR_NULL_POINTER, "fusert_kernel_blocks_per_sm: %s is NULL",
                                !fn ? "fn" : "blocks");
    *blocks = 0;
    const fusert_driver *d = fusert__driver();
    if (!d)
        return FUSERT_ERROR_NO_DEVICE;
    int n = 0;
    /* a driver without the call, or one that refuses: 0, "cannot say" */
    if (d->OccupancyMaxActiveBlocksPerMultiprocessor &&
        d->OccupancyMaxActiveBlocksPerMultiprocessor(&n, (CUfunction)fn, block, shared_bytes) == CUDA_SUCCESS)
        *blocks = n;
    return FUSERT_SUCCESS;
}

/* Attribute a of the current device, asked once per device and kept in
 * cache[dev] (0: not asked yet). */
static fusert_status device_attribute(_Atomic int *cache, CUdevice_attribute a, const char *what, int *out)
{
    const fusert_driver *d;
    int dev;
    fusert_status s = fusert__driver_device(&d, &dev);
    if (s != FUSERT_SUCCESS)
        return s;
    int n = atomic_load_explicit(&cache[dev], memory_order_relaxed);
    if (n <= 0) {
        CUresult r = d->DeviceGetAttribute(&n, a, (CUdevice)dev);
        if (r != CUDA_SUCCESS)
            return fusert__cuda_error(FUSERT_ERROR_CUDA, r, what);
        atomic_store_explicit(&cache[dev], n, memory_order_relaxed);
    }
    *out = n;
    return FUSERT_SUCCESS;
}

static _Atomic int sm_counts[FUSERT_MAX_DEVICES];
static _Atomic int smem_optin[FUSERT_MAX_DEVICES];
static _Atomic int l2_sizes[FUSERT_MAX_DEVICES];

fusert_status fusert_device_sm_count(int *count)
{
    if (!count)
        return fusert_set_error(FUSERT_ERROR_NULL_POINTER, "fusert_device_sm_count: count is NULL");
    return device_attribute(sm_counts, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                            "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)", count);
}

fusert_status fusert_device_l2_bytes(int *bytes)
{
    if (!bytes)
        return fusert_set_error(FUSERT_ERROR_NULL_POINTER, "fusert_device_l2_bytes: bytes is NULL");
    return device_attribute(l2_sizes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "cuDeviceGetAttribute(L2_CACHE_SIZE)",
                            bytes);
}

fusert_status fusert_device_shared_optin(int *bytes)
{
    if (!bytes)
        return fusert_set_error(FUSERT_ERROR_NULL_POINTER, "fusert_device_shared_optin: bytes is NULL");
    fusert_status s = device_attribute(smem_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                       "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)", bytes);
    /* a driver without cuFuncSetAttribute gives no way to opt in past 48 KiB */
    if (s == FUSERT_SUCCESS && !fusert__driver_quiet()->FuncSetAttribute && *bytes > 48 * 1024)
        *bytes = 48 * 1024;
    return s;
}

/* ---- stream-ordered scratch ---------------------------------------------- */

/* The start of the calls that hand out scratch: ptr checked and cleared,
 * then the driver and device.  *d stays NULL, with FUSERT_SUCCESS, when
 * there is nothing to hand out (no bytes). */
static fusert_status scratch_begin(const char *fn, void **ptr, size_t bytes,
                                   const fusert_driver **d, int *dev)
{
    *d = NULL;
    if (!ptr)
        return fusert_set_error(FUSERT_ERROR_NULL_POINTER, "%s: ptr is NULL", fn);
    *ptr = NULL;
    if (bytes == 0)
        return FUSERT_SUCCESS;
    return fusert__driver_device(d, dev);
}

fusert_status fusert_alloc_async(void **ptr, size_t bytes, fusert_stream stream)
{
    const fusert_driver *d;
    int dev;
    fusert_status s = scratch_begin("fusert_alloc_async", ptr, bytes, &d, &dev);
    if (s != FUSERT_SUCCESS || !d)
        return s;
    CUdeviceptr p = 0;
    CUresult r = d->MemAllocAsync(&p, bytes, (CUstream)stream);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
        return fusert_set_error(FUSERT_ERROR_OUT_OF_MEMORY,
                                "out of device memory: could not allocate %zu bytes of scratch "
                                "on device %d", bytes, dev);
    if (r != CUDA_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "cuMemAllocAsync(%zu bytes)", bytes);
        return fusert__cuda_error(FUSERT_ERROR_CUDA, r, what);
    }
    *ptr = (void *)(uintptr_t)p;
    return FUSERT_SUCCESS;
}

fusert_status fusert_free_async(void *ptr, fusert_stream stream)
{
    if (!ptr)
        return FUSERT_SUCCESS;
    const fusert_driver *d = fusert__driver();
    if (!d)
        return FUSERT_ERROR_NO_DEVICE;
    CUresult r = d->MemFreeAsync((CUdeviceptr)(uintptr_t)ptr, (CUstream)stream);
    if (r != CUDA_SUCCESS)
        return fusert__cuda_error(FUSERT_ERROR_CUDA, r, "cuMemFreeAsync");
    return FUSERT_SUCCESS;
}

fusert_status fusert_memset_async(void *ptr, int value, size_t bytes, fusert_stream stream)
{
    if (bytes == 0)
        return FUSERT_SUCCESS;
    if (!ptr)
        return fusert_set_error(FUSERT_ERROR_NULL_POINTER,
                                "fusert_memset_async: ptr is NULL for %zu bytes", bytes);
    const fusert_driver *d = fusert__driver();
    if (!d)
        return FUSERT_ERROR_NO_DEVICE;
    CUresult r = d->MemsetD8Async((CUdeviceptr)(uintptr_t)ptr, (unsigned char)value, bytes,
                                  (CUstream)stream);
    if (r != CUDA_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "cuMemsetD8Async(%zu bytes)", bytes);
        return fusert__cuda_error(FUSERT_ERROR_CUDA, r, what);
    }
    return FUSERT_SUCCESS;
}

/* ---- scratch kept per stream ---------------------------------------------- */

/* Two kinds of region per (device, stream id): zeroed (ticket counters and
 * atomic accumulators, which every user leaves zero) and plain (a call's
 * intermediates and partial results).  Their memory comes from the
 * stream's pool (cuMemAllocAsync), a zeroed one is zeroed on that stream,
 * so each is ready in stream order; a larger request replaces a region the
 * same way and frees the old one behind the work already queued.  Only
 * work on that stream touches a region, so a call never allocates once its
 * stream has served a call as large: its time does not depend on whether
 * the caller synchronizes in between (the pool may hand memory back to the
 * system at a synchronize). */
typedef struct stream_region {
    unsigned long long id;
    CUdeviceptr ptr;
    size_t bytes;
} stream_region;

enum { REGION_ZEROED, REGION_PLAIN, REGION_KINDS };
static stream_region regions[REGION_KINDS][FUSERT_MAX_DEVICES][FUSERT_ZEROED_STREAMS];
static int nregions[REGION_KINDS][FUSERT_MAX_DEVICES];
static pthread_mutex_t regions_lock = PTHREAD_MUTEX_INITIALIZER;

/* 1 when z now holds at least `bytes`; 0 when the driver refused (nothing
 * is recorded: the caller falls back to memory of its own, which reports
 * any lasting problem itself). */
static int region_grow(const fusert_driver *d, stream_region *z, size_t bytes, int zero, CUstream s)
{
    bytes = (bytes + 255) / 256 * 256;
    if (bytes < 4096)
        bytes = 4096; /* one allocation serves most kernels for good */
    if (!zero && bytes < z->bytes * 2 && z->bytes * 2 > z->bytes)
        bytes = z->bytes * 2; /* a growing need reallocates a few times, not every call */
    CUdeviceptr p = 0;
    if (d->MemAllocAsync(&p, bytes, s) != CUDA_SUCCESS)
        return 0;
    if (zero && d->MemsetD8Async(p, 0, bytes, s) != CUDA_SUCCESS) {
        d->MemFreeAsync(p, s);
        return 0;
    }
    if (z->ptr)
        d->MemFreeAsync(z->ptr, s); /* after the work that may still use it */
    z->ptr = p;
    z->bytes = bytes;
    return 1;
}

static fusert_status stream_region_get(const char *fn, int kind, fusert_stream stream, size_t bytes,
                                       void **ptr)
{
    const fusert_driver *d;
    int dev;
    fusert_status s = scratch_begin(fn, ptr, bytes, &d, &dev);
    if (s != FUSERT_SUCCESS || !d)
        return s;
    if (!d->StreamGetId)
        return FUSERT_SUCCESS;
    /* A stream that cannot be asked (the legacy stream while another is
     * captured, say) gets nothing: the caller's own allocation path
     * reports whatever is really wrong. */
    CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
    unsigned long long id = 0;
    if (d->StreamIsCapturing((CUstream)stream, &cap) != CUDA_SUCCESS ||
        cap != CU_STREAM_CAPTURE_STATUS_NONE || d->StreamGetId((CUstream)stream, &id) != CUDA_SUCCESS)
        return FUSERT_SUCCESS;
    pthread_mutex_lock(&regions_lock);
    stream_region *z = NULL;
    stream_region *table = regions[kind][dev];
    int *n = &nregions[kind][dev];
    for (int i = 0; i < *n && !z; i++)
        if (table[i].id == id)
            z = &table[i];
    if (!z && *n < FUSERT_ZEROED_STREAMS) {
        z = &table[(*n)++];
        z->id = id;
        z->ptr = 0;
        z->bytes = 0;
    }
    /* out of memory for it: nothing, and the caller's own path goes on */
    if (z && (z->bytes >= bytes || region_grow(d, z, bytes, kind == REGION_ZEROED, (CUstream)stream)))
        *ptr = (void *)(uintptr_t)z->ptr;
    pthread_mutex_unlock(&regions_lock);
    return FUSERT_SUCCESS;
}

fusert_status fusert_zeroed_scratch(fusert_stream stream, size_t bytes, void **ptr)
{
    return stream_region_get("fusert_zeroed_scratch", REGION_ZEROED, stream, bytes, ptr);
}

fusert_status fusert_stream_scratch(fusert_stream stream, size_t bytes, void **ptr)
{
    return stream_region_get("fusert_stream_scratch", REGION_PLAIN, stream, bytes, ptr);
}

/* ---- CUDA graphs ------------------------------------------------------------ */

struct fusert_graph {
    CUgraph graph;
    CUgraphExec exec;
};

fusert_status fusert_graph_begin(fusert_stream stream)
{
    if (!stream)
        return fusert_set_error(FUSERT_ERROR_INVALID_VALUE,
                                "graph capture needs a created stream: the default (NULL) "
                                "stream cannot be captured");
    const fusert_driver *d;
    int dev;
    fusert_status s = fusert__driver_device(&d, &dev);
    if (s != FUSERT_SUCCESS)
        return s;
    /* Relaxed mode: a module loaded lazily by the first call inside the
     * capture is legal then.  In per-kernel mode that is any kernel the
     * process has not launched before on this device (a new size may pick
     * a new variant), not only a module's first kernel. */
    CUresult r = d->StreamBeginCapture((CUstream)stream, CU_STREAM_CAPTURE_MODE_RELAXED);
    if (r != CUDA_SUCCESS)
        return fusert__cuda_error(FUSERT_ERROR_CUDA, r, "cuStreamBeginCapture");
    return FUSERT_SUCCESS;
}

fusert_status fusert_graph_end(fusert_stream stream, fusert_graph **out)
{
    if (!out)
        return fusert_set_error(FUSERT_ERROR_NULL_POINTER, "fusert_graph_end: out is NULL");
    *out = NULL;
    if (!stream)
        return fusert_set_error(FUSERT_ERROR_INVALID_VALUE,
                                "fusert_graph_end: the default (NULL) stream is never captured");
    const fusert_driver *d = fusert__driver();
    if (!d)
        return FUSERT_ERROR_NO_DEVICE;
    CUgraph g = NULL;
    CUresult r = d->StreamEndCapture((CUstream)stream, &g);
    if (r != CUDA_SUCCESS)
        return fusert__cuda_error(FUSERT_ERROR_CUDA, r,
                                  "cuStreamEndCapture (a call during the capture failed, or "
                                  "work from another stream joined it)");
    fusert_graph *fg = calloc(1, sizeof *fg);
    if (!fg) {
        d->GraphDestroy(g);
        return fusert_set_error(FUSERT_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    fg->graph = g;
    r = d->GraphInstantiateWithFlags(&fg->exec, g, 0);
    if (r != CUDA_SUCCESS) {
        d->GraphDestroy(g);
        free(fg);
        return fusert__cuda_error(FUSERT_ERROR_CUDA, r, "cuGraphInstantiate");
    }
    *out = fg;
    return FUSERT_SUCCESS;
}

fusert_status fusert_graph_launch(fusert_graph *g, fusert_stream stream)
{
    if (!g)
        return fusert_set_error(FUSERT_ERROR_NULL_POINTER, "fusert_graph_launch: graph is NULL");
    const fusert_driver *d = fusert__driver();
    if (!d)
        return FUSERT_ERROR_NO_DEVICE;
    CUresult r = d->GraphLaunch(g->exec, (CUstream)stream);
    if (r != CUDA_SUCCESS)
        return fusert__cuda_error(FUSERT_ERROR_LAUNCH, r, "cuGraphLaunch");
    return FUSERT_SUCCESS;
}

void fusert_graph_destroy(fusert_graph *g)
{
    if (!g)
        return;
    const fusert_driver *d = fusert__driver_quiet();
    if (d) {
        if (g->exec)
            d->GraphExecDestroy(g->exec);
        if (g->graph)
            d->GraphDestroy(g->graph);
    }
    free(g);
}
