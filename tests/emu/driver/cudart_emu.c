/* cudart_emu.c -- the CUDA runtime calls of a C driver, for a run on the CPU
 * emulator (see cuda_runtime_api.h beside this file).  fusert_status_name,
 * which the emulator's build of a module does not define, comes from
 * runtime/fusert_status.c, built beside it.  Allocations are
 * filled with 0xff bytes, as the emulator's own are, so a value that nothing
 * wrote reads as NaN.  Streams are tokens: the emulator runs every launch to
 * completion before the call returns. */
#include "cuda_runtime_api.h"
#include "fusert.h"
#include <stdlib.h>
#include <string.h>

static char stream_token;

cudaError_t cudaMalloc(void **p, size_t bytes)
{
    if (!p)
        return cudaErrorInvalidValue;
    *p = malloc(bytes ? bytes : 1);
    if (!*p)
        return cudaErrorMemoryAllocation;
    memset(*p, 0xff, bytes);
    return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    (void)kind;
    if (bytes && (!dst || !src))
        return cudaErrorInvalidValue;
    if (bytes)
        memcpy(dst, src, bytes);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                            cudaStream_t s)
{
    (void)s;
    return cudaMemcpy(dst, src, bytes, kind);
}

cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t s)
{
    (void)s;
    if (bytes && !p)
        return cudaErrorInvalidValue;
    if (bytes)
        memset(p, value, bytes);
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    if (!s)
        return cudaErrorInvalidValue;
    *s = (cudaStream_t)(void *)&stream_token;
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    return s == (cudaStream_t)(void *)&stream_token ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    (void)s;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    }
    return "unknown error";
}
