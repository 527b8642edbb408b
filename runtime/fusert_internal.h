/* fusert_internal.h -- what the runtime's files share and users never see.
 *
 * The driver API is reached through a table of function pointers filled by
 * dlopen("libcuda.so.1") once per process (fusert_driver.c), so that the
 * library loads where no driver is installed.  The table is written once
 * under pthread_once and read-only afterwards. */
#ifndef FUSERT_INTERNAL_H
#define FUSERT_INTERNAL_H
#include "fusert.h"
#include <cuda.h>
#include <stdint.h>

/* Entry points of libcuda we use.  Field names avoid the cuda.h macros that
 * rename e.g. cuStreamBeginCapture to cuStreamBeginCapture_v2. */
typedef struct fusert_driver {
    CUresult (*Init)(unsigned flags);
    CUresult (*DriverGetVersion)(int *v);
    CUresult (*GetErrorName)(CUresult e, const char **s);
    CUresult (*GetErrorString)(CUresult e, const char **s);
    CUresult (*DeviceGet)(CUdevice *d, int ordinal);
    CUresult (*DeviceGetCount)(int *n);
    CUresult (*DeviceGetAttribute)(int *v, CUdevice_attribute a, CUdevice d);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *c, CUdevice d);
    CUresult (*CtxGetCurrent)(CUcontext *c);
    CUresult (*CtxSetCurrent)(CUcontext c);
    CUresult (*CtxGetDevice)(CUdevice *d);
    CUresult (*ModuleLoadData)(CUmodule *m, const void *image);
    CUresult (*ModuleGetFunction)(CUfunction *f, CUmodule m, const char *name);
    CUresult (*ModuleUnload)(CUmodule m);
    CUresult (*LaunchKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                             unsigned by, unsigned bz, unsigned shared, CUstream s,
                             void **params, void **extra);
    CUresult (*MemAllocAsync)(CUdeviceptr *p, size_t bytes, CUstream s);
    CUresult (*MemFreeAsync)(CUdeviceptr p, CUstream s);
    CUresult (*MemsetD8Async)(CUdeviceptr p, unsigned char v, size_t n, CUstream s);
    CUresult (*StreamBeginCapture)(CUstream s, CUstreamCaptureMode mode);
    CUresult (*StreamEndCapture)(CUstream s, CUgraph *g);
    CUresult (*GraphInstantiateWithFlags)(CUgraphExec *e, CUgraph g, unsigned long long flags);
    CUresult (*GraphLaunch)(CUgraphExec e, CUstream s);
    CUresult (*GraphExecDestroy)(CUgraphExec e);
    CUresult (*GraphDestroy)(CUgraph g);
    CUresult (*StreamIsCapturing)(CUstream s, CUstreamCaptureStatus *st);
    /* optional (CUDA 12.0 drivers and later); NULL when missing */
    CUresult (*StreamGetId)(CUstream s, unsigned long long *id);
    CUresult (*FuncGetAttribute)(int *v, CUfunction_attribute a, CUfunction f); /* optional */
    CUresult (*FuncSetAttribute)(CUfunction f, CUfunction_attribute a, int v);  /* optional */
    CUresult (*OccupancyMaxActiveBlocksPerMultiprocessor)(int *n, CUfunction f, int block,
                                                          size_t shared_bytes); /* optional */
} fusert_driver;

/* The loaded driver with cuInit(0) done, or NULL after recording
 * FUSERT_ERROR_NO_DEVICE (the message says why: no libcuda, cuInit failed). */
const fusert_driver *fusert__driver(void);
/* Like fusert__driver but records nothing: for probing (arch choice). */
const fusert_driver *fusert__driver_quiet(void);
/* Make sure a context is current on this thread (the primary context of
 * device 0 if none is) and return its device ordinal. */
fusert_status fusert__current_device(const fusert_driver *d, int *ordinal);
/* Both: the driver (FUSERT_ERROR_NO_DEVICE without one) and the current
 * device's ordinal. */
fusert_status fusert__driver_device(const fusert_driver **d, int *ordinal);
/* Record a failed driver call: "<what>: CUDA_ERROR_X (text)". */
fusert_status fusert__cuda_error(fusert_status s, CUresult r, const char *what);
/* The compute capability of the current device (device 0 when no context
 * is current); without a usable device, from $FUSERT_ARCH ("sm_90") or 9.0. */
void fusert__target_arch(int *major, int *minor);

/* Does NVRTC <nv_major>.<nv_minor> take option opt?  All but -minimal
 * before 12.4, which the compile then leaves out (fusert_cache.c). */
int fusert__nvrtc_takes(const char *opt, int nv_major, int nv_minor);
/* fusert_compile for one kernel of module `name` (per-kernel mode): the
 * messages and the cache entry's file name say "kernel K of module M".  The
 * options (which pick the kernel, -DFUSERT_KERNEL=<i>) are in the key like
 * any others.  kernel NULL: the whole module, as fusert_compile. */
fusert_status fusert__compile(const char *name, const char *kernel, const char *source,
                              const char *options, void **cubin, size_t *cubin_size);

/* The environment variable is set, not empty and not "0" (fusert_cache.c). */
int fusert__env_flag(const char *name);
/* FUSERT_VERBOSE is set (fusert_cache.c). */
int fusert__verbose(void);

/* SHA-256 (sha256.c): a small FIPS 180-4 implementation for cache keys and
 * entry checksums. */
typedef struct fusert_sha256 {
    uint32_t h[8];
    uint64_t len;
    unsigned char buf[64];
    size_t nbuf;
} fusert_sha256;
void fusert__sha256_init(fusert_sha256 *c);
void fusert__sha256_update(fusert_sha256 *c, const void *data, size_t n);
void fusert__sha256_final(fusert_sha256 *c, unsigned char out[32]);
void fusert__sha256(const void *data, size_t n, unsigned char out[32]);

#endif
