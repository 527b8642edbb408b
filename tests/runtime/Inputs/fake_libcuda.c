/* fake_libcuda.c -- a stand-in for libcuda.so.1 with no GPU behind it, for
 * the runtime tests that need a "device" (FUSERT_LIBCUDA points fusert at
 * this library).  It exports every driver entry point fusert resolves and
 * keeps just enough state to check fusert's module handling:
 *
 *   - two devices of compute capability 9.0 with 132 multiprocessors, a
 *     primary context per device, a current context per thread;
 *   - cuModuleLoadData reads the CUBIN's ELF symbol table and remembers
 *     its kernels (tests/common/cubin_functions.h), so
 *     cuModuleGetFunction finds exactly the kernels that NVRTC compiled;
 *   - stream capture: while a capture begun in a mode other than RELAXED is
 *     open, cuModuleLoadData fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
 *     (module loading taken as one of the "potentially unsafe" calls that
 *     the driver's capture modes speak of; a real driver is the judge);
 *   - launches, scratch memory and graphs succeed and do nothing.
 *
 * The tests read the counters through the fake_* functions (dlsym on the
 * same dlopen handle fusert uses). */
#include "cubin_functions.h" /* tests/common */
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_DEVICES 2
#define FAKE_MAX_KERNELS 16

typedef struct fake_function {
    struct fake_module *module;
    char name[128];
    int max_dynamic_shared; /* cuFuncSetAttribute's MAX_DYNAMIC_SHARED_SIZE_BYTES */
} fake_function;

/* the opt-in limit of a block's shared memory, as an H200's */
#define FAKE_SHARED_OPTIN 232448

typedef struct fake_module {
    int device;
    int nkernels;
    fake_function kernels[FAKE_MAX_KERNELS];
} fake_module;

/* fake contexts are just the device ordinal's address */
static int contexts[FAKE_DEVICES] = {0, 1};
static _Thread_local CUcontext current;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int loads, unloads, live_modules, capture_open;
static CUstreamCaptureMode capture_mode;
static CUstream capture_stream; /* the one capture open is on this stream */

/* ---- what the tests read ---------------------------------------------- */

int fake_module_loads(void);
int fake_module_unloads(void);
int fake_live_modules(void);
int fake_function_module_kernels(CUfunction f);
int fake_function_device(CUfunction f);
const char *fake_function_name(CUfunction f);
int fake_function_max_dynamic_shared(CUfunction f);
void fake_use_device(int d);

int fake_module_loads(void) { return __atomic_load_n(&loads, __ATOMIC_SEQ_CST); }
int fake_module_unloads(void) { return __atomic_load_n(&unloads, __ATOMIC_SEQ_CST); }
int fake_live_modules(void) { return __atomic_load_n(&live_modules, __ATOMIC_SEQ_CST); }
/* the number of kernels in the module of f, and its device; -1 if f is NULL */
int fake_function_module_kernels(CUfunction f)
{
    return f ? ((fake_function *)(void *)f)->module->nkernels : -1;
}
int fake_function_device(CUfunction f) { return f ? ((fake_function *)(void *)f)->module->device : -1; }
const char *fake_function_name(CUfunction f) { return f ? ((fake_function *)(void *)f)->name : ""; }
int fake_function_max_dynamic_shared(CUfunction f)
{
    return f ? ((fake_function *)(void *)f)->max_dynamic_shared : -1;
}
/* make device d's context current on this thread (cuCtxSetCurrent, typed) */
void fake_use_device(int d) { current = (CUcontext)(void *)&contexts[d]; }

/* ---- the CUBIN's kernels ------------------------------------------------ */

static void add_kernel(const char *name, int is_kernel, void *ctx)
{
    fake_module *m = ctx;
    if (!is_kernel || m->nkernels == FAKE_MAX_KERNELS)
        return;
    fake_function *f = &m->kernels[m->nkernels++];
    f->module = m;
    strncpy(f->name, name, sizeof f->name - 1);
}

/* cuModuleLoadData gets no size: the image ends where its last section or
 * the section table does (fusert hands over what NVRTC produced). */
static size_t elf_size(const unsigned char *img)
{
    if (memcmp(img, "\x7f" "ELF", 4) != 0 || img[4] != 2)
        return 0;
    uint64_t shoff = cubin_le(img + 40, 8);
    unsigned shentsize = (unsigned)cubin_le(img + 58, 2), shnum = (unsigned)cubin_le(img + 60, 2);
    uint64_t end = shoff + (uint64_t)shnum * shentsize;
    for (unsigned i = 0; i < shnum; i++) {
        const unsigned char *sh = img + shoff + (size_t)i * shentsize;
        uint64_t last = cubin_le(sh + 24, 8) + cubin_le(sh + 32, 8);
        if (cubin_le(sh + 4, 4) != 8 && last > end) /* not SHT_NOBITS */
            end = last;
    }
    return (size_t)end;
}

/* ---- the driver API ------------------------------------------------------ */

CUresult cuInit(unsigned flags) { return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
CUresult cuDriverGetVersion(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult e, const char **s)
{
    *s = e == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED ? "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"
         : e == CUDA_ERROR_NOT_FOUND               ? "CUDA_ERROR_NOT_FOUND"
         : e == CUDA_ERROR_INVALID_IMAGE           ? "CUDA_ERROR_INVALID_IMAGE"
                                                   : "CUDA_ERROR_FAKE";
    return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult e, const char **s)
{
    *s = e == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED ? "operation not permitted when stream is capturing"
         : e == CUDA_ERROR_NOT_FOUND               ? "named symbol not found"
                                                   : "fake driver error";
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (ordinal < 0 || ordinal >= FAKE_DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *n)
{
    *n = FAKE_DEVICES;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
        *v = 9;
    else if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
        *v = 0;
    else if (a == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        *v = 132;
    else if (a == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        *v = FAKE_SHARED_OPTIN;
    else if (a == CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
        *v = 62914560; /* an H200's, as it reports it */
    else
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    *c = (CUcontext)(void *)&contexts[d];
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *c)
{
    *c = current;
    return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext c)
{
    current = c;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *d)
{
    if (!current)
        return CUDA_ERROR_INVALID_CONTEXT;
    *d = *(int *)(void *)current;
    return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *out, const void *image)
{
    if (!current)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&mu);
    int refused = capture_open && capture_mode != CU_STREAM_CAPTURE_MODE_RELAXED;
    pthread_mutex_unlock(&mu);
    if (refused)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    fake_module *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (!cubin_functions(image, elf_size(image), add_kernel, m)) {
        free(m);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    m->device = *(int *)(void *)current;
    __atomic_add_fetch(&loads, 1, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&live_modules, 1, __ATOMIC_SEQ_CST);
    *out = (CUmodule)(void *)m;
    return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *f, CUmodule mod, const char *name)
{
    fake_module *m = (fake_module *)(void *)mod;
    for (int i = 0; i < m->nkernels; i++)
        if (strcmp(m->kernels[i].name, name) == 0) {
            *f = (CUfunction)(void *)&m->kernels[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}

CUresult cuModuleUnload(CUmodule mod)
{
    free((void *)mod);
    __atomic_add_fetch(&unloads, 1, __ATOMIC_SEQ_CST);
    __atomic_sub_fetch(&live_modules, 1, __ATOMIC_SEQ_CST);
    return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, CUstream s, void **params,
                        void **extra)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)s;
    (void)params, (void)extra;
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    /* as the driver: dynamic shared memory up to what the kernel opted in
     * to, by default 48 KiB less its static shared memory (1 KiB here) */
    const int optin = ((fake_function *)(void *)f)->max_dynamic_shared;
    if ((int)shared > (optin > 0 ? optin : 47 * 1024))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

/* Blocks a multiprocessor holds: 2048 threads' worth (a kernel of 32
 * registers); a block past 1024 threads is refused, as the driver does */
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int block, size_t shared)
{
    (void)shared;
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    if (block <= 0 || block > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    *n = 2048 / block > 32 ? 32 : 2048 / block;
    return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    if (a != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || v < 0 || v > FAKE_SHARED_OPTIN)
        return CUDA_ERROR_INVALID_VALUE;
    ((fake_function *)(void *)f)->max_dynamic_shared = v;
    return CUDA_SUCCESS;
}

CUresult cuMemAllocAsync(CUdeviceptr *p, size_t bytes, CUstream s)
{
    (void)s;
    void *m = malloc(bytes ? bytes : 1);
    *p = (CUdeviceptr)(uintptr_t)m;
    return m ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
    (void)s;
    free((void *)(uintptr_t)p);
    return CUDA_SUCCESS;
}

CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s)
{
    (void)s;
    memset((void *)(uintptr_t)p, v, n);
    return CUDA_SUCCESS;
}

CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
    pthread_mutex_lock(&mu);
    CUresult r = capture_open ? CUDA_ERROR_ILLEGAL_STATE : CUDA_SUCCESS;
    if (!capture_open) {
        capture_open = 1;
        capture_mode = mode;
        capture_stream = s;
    }
    pthread_mutex_unlock(&mu);
    return r;
}

CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
    pthread_mutex_lock(&mu);
    *st = capture_open && s == capture_stream ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                                              : CU_STREAM_CAPTURE_STATUS_NONE;
    pthread_mutex_unlock(&mu);
    return CUDA_SUCCESS;
}

/* a stream's id is its handle (NULL: 0); real ids are never reused */
CUresult cuStreamGetId(CUstream s, unsigned long long *id)
{
    *id = (unsigned long long)(uintptr_t)s;
    return CUDA_SUCCESS;
}

static int graph_token;

CUresult cuStreamEndCapture(CUstream s, CUgraph *g)
{
    (void)s;
    pthread_mutex_lock(&mu);
    CUresult r = capture_open ? CUDA_SUCCESS : CUDA_ERROR_ILLEGAL_STATE;
    capture_open = 0;
    pthread_mutex_unlock(&mu);
    *g = (CUgraph)(void *)&graph_token;
    return r;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
    (void)g, (void)flags;
    *e = (CUgraphExec)(void *)&graph_token;
    return CUDA_SUCCESS;
}

CUresult cuGraphLaunch(CUgraphExec e, CUstream s)
{
    (void)e, (void)s;
    return CUDA_SUCCESS;
}

CUresult cuGraphExecDestroy(CUgraphExec e)
{
    (void)e;
    return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph g)
{
    (void)g;
    return CUDA_SUCCESS;
}
