/* fake_fusert.c -- a stand-in for libfusert that needs no GPU, for the host
 * tests: it implements what generated nvrtc-target code calls, on host
 * memory, and prints one line per call so a test can FileCheck the order
 * of allocations, zero-fills, launches and frees.  Device pointers are only
 * passed around by the host code, never dereferenced, so host memory does.
 * fusert_status_name and the error state (fusert_set_error,
 * fusert_last_error) come from runtime/fusert_status.c, built beside it. */
#include "fusert.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


fusert_status fusert_program_kernel(fusert_program *p, int index, void **fn)
{
    if (index < 0 || index >= p->nkernels)
        return fusert_set_error(FUSERT_ERROR_INVALID_VALUE, "fake: kernel index %d of %d", index,
                                p->nkernels);
    if (!p->source || !p->source[0])
        return fusert_set_error(FUSERT_ERROR_COMPILE, "fake: empty source");
    *fn = (void *)p->kernels[index];
    return FUSERT_SUCCESS;
}

/* FAKE_FUSERT_WREV_ARG=K: also print the int argument K of the windowed
 * looped row kernels (names with _blockw), their last one, wrev, which
 * says whether every second pass reads the row from its end */
fusert_status fusert_launch(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shared_bytes,
                            fusert_stream stream, void **params)
{
    const char *wa = getenv("FAKE_FUSERT_WREV_ARG");
    (void)stream;
    printf("fake: launch %s grid %u %u %u block %u %u %u%s", (const char *)fn, gx, gy, gz, bx,
           by, bz, params ? "" : " (no params)");
    if (shared_bytes)
        printf(" shared %u", shared_bytes);
    if (wa && params && strstr((const char *)fn, "_blockw"))
        printf(" wrev %d", *(const int *)params[atoi(wa)]);
    printf("\n");
    if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || bx * by * bz > 1024)
        return fusert_set_error(FUSERT_ERROR_LAUNCH, "fake: bad launch shape");
    return FUSERT_SUCCESS;
}

/* The cluster widths an sm_90 build has: the fake's kernels are their
 * names, and the cluster variants say their width in it (_r65536c: 2). */
fusert_status fusert_kernel_cluster_width(void *fn, int *width)
{
    const char *n = (const char *)fn;
    size_t len = strlen(n);
    *width = 0;
    if (len > 9 && strcmp(n + len - 8, "_r65536c") == 0)
        *width = 2;
    else if (len > 10 && strcmp(n + len - 9, "_r131072c") == 0)
        *width = 4;
    else if (len > 10 && strcmp(n + len - 9, "_r262144c") == 0)
        *width = 8;
    printf("fake: cluster width of %s: %d\n", n, *width);
    return FUSERT_SUCCESS;
}

/* Blocks a multiprocessor holds: two (an H200's for a kernel of 32
 * registers in blocks of 1024, or one of up to 64 in blocks of 512), or
 * FAKE_FUSERT_BLOCKS_PER_SM blocks of 1024 threads for kernels whose name
 * ends in _blockw (the windowed looped kernel), twice as many of 512 */
fusert_status fusert_kernel_blocks_per_sm(void *fn, int block, unsigned shared_bytes, int *blocks)
{
    const char *n = (const char *)fn, *e = getenv("FAKE_FUSERT_BLOCKS_PER_SM");
    size_t len = strlen(n);
    *blocks = 2;
    if (e && len > 7 && strcmp(n + len - 7, "_blockw") == 0)
        *blocks = atoi(e) * (block < 1024 ? 1024 / block : 1);
    printf("fake: blocks of %d threads (%u bytes shared) a multiprocessor holds of %s: %d\n", block, shared_bytes, n,
           *blocks);
    return FUSERT_SUCCESS;
}

/* An H200's L2 (60 MiB, as the device reports it), or FAKE_FUSERT_L2_BYTES */
fusert_status fusert_device_l2_bytes(int *bytes)
{
    const char *e = getenv("FAKE_FUSERT_L2_BYTES");
    *bytes = e && atoi(e) > 0 ? atoi(e) : 62914560;
    return FUSERT_SUCCESS;
}

/* An H200's opt-in limit, or FAKE_FUSERT_SMEM_OPTIN bytes (another GPU's) */
fusert_status fusert_device_shared_optin(int *bytes)
{
    const char *e = getenv("FAKE_FUSERT_SMEM_OPTIN");
    *bytes = e && atoi(e) > 0 ? atoi(e) : 232448;
    return FUSERT_SUCCESS;
}

fusert_status fusert_device_sm_count(int *count)
{
    *count = 132;
    return FUSERT_SUCCESS;
}

fusert_status fusert_alloc_async(void **ptr, size_t bytes, fusert_stream stream)
{
    (void)stream;
    *ptr = aligned_alloc(256, (bytes + 255) / 256 * 256);
    printf("fake: alloc %zu\n", bytes);
    return *ptr ? FUSERT_SUCCESS : fusert_set_error(FUSERT_ERROR_OUT_OF_MEMORY, "fake: oom");
}

fusert_status fusert_free_async(void *ptr, fusert_stream stream)
{
    (void)stream;
    free(ptr);
    printf("fake: free\n");
    return FUSERT_SUCCESS;
}

fusert_status fusert_memset_async(void *ptr, int value, size_t bytes, fusert_stream stream)
{
    (void)stream;
    memset(ptr, value, bytes);
    printf("fake: memset %zu\n", bytes);
    return FUSERT_SUCCESS;
}

/* No zeroed scratch here: calls take their memset path, which the checks
 * of host-run-fake.test see. */
fusert_status fusert_zeroed_scratch(fusert_stream stream, size_t bytes, void **ptr)
{
    (void)stream;
    *ptr = NULL;
    printf("fake: zeroed scratch of %zu asked, none given\n", bytes);
    return FUSERT_SUCCESS;
}

/* No stream region either: calls allocate and free their own block, which
 * the checks of host-run-fake.test see. */
fusert_status fusert_stream_scratch(fusert_stream stream, size_t bytes, void **ptr)
{
    (void)stream;
    (void)bytes;
    *ptr = NULL;
    return FUSERT_SUCCESS;
}
