/* fusert_driver.c -- finding the CUDA driver at run time.
 *
 * libfusert does not link libcuda: it dlopen()s "libcuda.so.1" the first time
 * a driver call is needed and resolves each entry point by its exported
 * (versioned) symbol name, then calls cuInit(0).  The outcome is decided once
 * per process under pthread_once and never changes, so a machine without a
 * driver or device gets FUSERT_ERROR_NO_DEVICE with the reason every time,
 * quickly, and never an abort or a loader error.
 *
 * Contexts: work runs in the context current on the calling thread; when
 * there is none, the device's primary context is retained and made current,
 * the same context the CUDA runtime API uses, so generated code and
 * cudaMalloc'd buffers from the runtime API (PyTorch, CuPy) mix freely. */
#include "fusert_internal.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static fusert_driver drv;
static const fusert_driver *drv_ok;   /* &drv once loaded and initialised */
static char drv_why[512];             /* why not, when drv_ok is NULL */
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

/* Symbol names as libcuda exports them (the _v2 names where cuda.h maps the
 * plain name to a newer version). */
#define DRIVER_SYMBOLS(X)                                                      \
    X(Init, "cuInit")                                                          \
    X(DriverGetVersion, "cuDriverGetVersion")                                  \
    X(GetErrorName, "cuGetErrorName")                                          \
    X(GetErrorString, "cuGetErrorString")                                      \
    X(DeviceGet, "cuDeviceGet")                                                \
    X(DeviceGetCount, "cuDeviceGetCount")                                      \
    X(DeviceGetAttribute, "cuDeviceGetAttribute")                              \
    X(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")                      \
    X(CtxGetCurrent, "cuCtxGetCurrent")                                        \
    X(CtxSetCurrent, "cuCtxSetCurrent")                                        \
    X(CtxGetDevice, "cuCtxGetDevice")                                          \
    X(ModuleLoadData, "cuModuleLoadData")                                      \
    X(ModuleGetFunction, "cuModuleGetFunction")                                \
    X(ModuleUnload, "cuModuleUnload")                                          \
    X(LaunchKernel, "cuLaunchKernel")                                          \
    X(MemAllocAsync, "cuMemAllocAsync")                                        \
    X(MemFreeAsync, "cuMemFreeAsync")                                          \
    X(MemsetD8Async, "cuMemsetD8Async")                                        \
    X(StreamBeginCapture, "cuStreamBeginCapture_v2")                           \
    X(StreamEndCapture, "cuStreamEndCapture")                                  \
    X(GraphInstantiateWithFlags, "cuGraphInstantiateWithFlags")                \
    X(GraphLaunch, "cuGraphLaunch")                                            \
    X(GraphExecDestroy, "cuGraphExecDestroy")                                  \
    X(GraphDestroy, "cuGraphDestroy")                                          \
    X(StreamIsCapturing, "cuStreamIsCapturing")

static void load_driver(void)
{
    const char *lib = getenv("FUSERT_LIBCUDA"); /* testing hook: another path */
    if (!lib || !*lib)
        lib = "libcuda.so.1";
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(drv_why, sizeof drv_why,
                 "no CUDA driver: cannot load %s (%s); install the NVIDIA driver or run on a "
                 "machine with a GPU", lib, e ? e : "not found");
        return;
    }
    /* dlsym returns void *; converting it to a function pointer is what
     * POSIX guarantees to work, memcpy keeps -Wpedantic quiet about it. */
#define LOAD(field, sym)                                                       \
    {                                                                          \
        void *p = dlsym(h, sym);                                               \
        if (!p) {                                                              \
            snprintf(drv_why, sizeof drv_why,                                  \
                     "the CUDA driver in %s is too old: it lacks %s", lib, sym); \
            return;                                                            \
        }                                                                      \
        memcpy(&drv.field, &p, sizeof p);                                      \
    }
    DRIVER_SYMBOLS(LOAD)
#undef LOAD
    {
        /* optional: without it fusert_zeroed_scratch hands out nothing */
        void *p = dlsym(h, "cuStreamGetId");
        if (p)
            memcpy(&drv.StreamGetId, &p, sizeof p);
        /* optional: without it no kernel reports a cluster width */
        p = dlsym(h, "cuFuncGetAttribute");
        if (p)
            memcpy(&drv.FuncGetAttribute, &p, sizeof p);
        /* optional: without it no launch gets more than 48 KiB of dynamic
         * shared memory (fusert_device_shared_optin then says 48 KiB) */
        p = dlsym(h, "cuFuncSetAttribute");
        if (p)
            memcpy(&drv.FuncSetAttribute, &p, sizeof p);
        /* optional: without it fusert_kernel_blocks_per_sm says 0 (the
         * launchers then take the variant that needs no answer) */
        p = dlsym(h, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
        if (p)
            memcpy(&drv.OccupancyMaxActiveBlocksPerMultiprocessor, &p, sizeof p);
    }
    CUresult r = drv.Init(0);
    if (r != CUDA_SUCCESS) {
        const char *name = NULL, *text = NULL;
        drv.GetErrorName(r, &name);
        drv.GetErrorString(r, &text);
        snprintf(drv_why, sizeof drv_why, "no usable CUDA device: cuInit failed with %s (%s)",
                 name ? name : "an unknown error", text ? text : "no description");
        return;
    }
    int n = 0;
    if (drv.DeviceGetCount(&n) != CUDA_SUCCESS || n == 0) {
        snprintf(drv_why, sizeof drv_why, "no CUDA device: the driver reports %d devices", n);
        return;
    }
    drv_ok = &drv;
}

const fusert_driver *fusert__driver_quiet(void)
{
    pthread_once(&drv_once, load_driver);
    return drv_ok;
}

const fusert_driver *fusert__driver(void)
{
    const fusert_driver *d = fusert__driver_quiet();
    if (!d)
        fusert_set_error(FUSERT_ERROR_NO_DEVICE, "%s", drv_why);
    return d;
}

fusert_status fusert__cuda_error(fusert_status s, CUresult r, const char *what)
{
    const char *name = NULL, *text = NULL;
    if (drv_ok) {
        drv.GetErrorName(r, &name);
        drv.GetErrorString(r, &text);
    }
    return fusert_set_error(s, "%s failed: %s (%s)", what, name ? name : "CUDA error",
                            text ? text : "no description");
}

fusert_status fusert__current_device(const fusert_driver *d, int *ordinal)
{
    CUcontext ctx = NULL;
    CUresult r = d->CtxGetCurrent(&ctx);
    if (r != CUDA_SUCCESS)
        return fusert__cuda_error(FUSERT_ERROR_CUDA, r, "cuCtxGetCurrent");
    if (!ctx) {
        CUdevice dev;
        if ((r = d->DeviceGet(&dev, 0)) != CUDA_SUCCESS)
            return fusert__cuda_error(FUSERT_ERROR_NO_DEVICE, r, "cuDeviceGet(0)");
        if ((r = d->DevicePrimaryCtxRetain(&ctx, dev)) != CUDA_SUCCESS)
            return fusert__cuda_error(FUSERT_ERROR_CUDA, r, "cuDevicePrimaryCtxRetain(device 0)");
        if ((r = d->CtxSetCurrent(ctx)) != CUDA_SUCCESS)
            return fusert__cuda_error(FUSERT_ERROR_CUDA, r, "cuCtxSetCurrent");
    }
    CUdevice dev;
    if ((r = d->CtxGetDevice(&dev)) != CUDA_SUCCESS)
        return fusert__cuda_error(FUSERT_ERROR_CUDA, r, "cuCtxGetDevice");
    if ((int)dev < 0 || (int)dev >= FUSERT_MAX_DEVICES)
        return fusert_set_error(FUSERT_ERROR_CUDA, "device ordinal %d is beyond the %d devices "
                                "fusert supports", (int)dev, FUSERT_MAX_DEVICES);
    *ordinal = (int)dev;
    return FUSERT_SUCCESS;
}

fusert_status fusert__driver_device(const fusert_driver **d, int *ordinal)
{
    *d = fusert__driver();
    if (!*d)
        return FUSERT_ERROR_NO_DEVICE;
    return fusert__current_device(*d, ordinal);
}

/* Parse "sm_90", "sm_90a", "compute_80" or "90" into major.minor. */
static int parse_arch(const char *s, int *major, int *minor)
{
    if (strncmp(s, "sm_", 3) == 0)
        s += 3;
    else if (strncmp(s, "compute_", 8) == 0)
        s += 8;
    int v = 0, digits = 0;
    for (; *s >= '0' && *s <= '9'; s++, digits++)
        v = v * 10 + (*s - '0');
    if (digits < 2 || v < 10)
        return 0;
    *major = v / 10;
    *minor = v % 10;
    return 1;
}

void fusert__target_arch(int *major, int *minor)
{
    const fusert_driver *d = fusert__driver_quiet();
    if (d) {
        CUcontext ctx = NULL;
        CUdevice dev = 0;
        int ok = d->CtxGetCurrent(&ctx) == CUDA_SUCCESS;
        if (ok && ctx)
            ok = d->CtxGetDevice(&dev) == CUDA_SUCCESS;
        else
            ok = ok && d->DeviceGet(&dev, 0) == CUDA_SUCCESS;
        if (ok &&
            d->DeviceGetAttribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) ==
                CUDA_SUCCESS &&
            d->DeviceGetAttribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) ==
                CUDA_SUCCESS)
            return;
    }
    const char *env = getenv("FUSERT_ARCH");
    if (env && parse_arch(env, major, minor))
        return;
    *major = 9;
    *minor = 0;
}
