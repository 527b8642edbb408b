/* test_fusert_nodevice.c -- without a driver, every driver call reports
 * FUSERT_ERROR_NO_DEVICE with a reason, nothing aborts, and NVRTC compiles
 * still work.  FUSERT_LIBCUDA points the loader at a library that does not
 * exist, so this holds on GPU machines too.
 *
 * RUN: %rtbin/test_fusert_nodevice | FileCheck %s
 * CHECK: no device: {{.*}}no CUDA driver
 * CHECK-NOT: FAIL
 * CHECK: test_fusert_nodevice: all {{[0-9]+}} checks passed
 */
#include "rt_test.h"

int main(void)
{
    setenv("FUSERT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    setenv("FUSERT_ARCH", "sm_90", 1);
    setenv("FUSERT_CACHE_DISABLE", "1", 1);

    static const char *const names[] = {"scale_add"};
    static fusert_program prog = {.name = "nodev", .kernels = names, .nkernels = 1};
    prog.source = rt_kernel_source("nodevice");
    void *fn = NULL;
    CHECK_STATUS(fusert_program_kernel(&prog, 0, &fn), FUSERT_ERROR_NO_DEVICE);
    printf("no device: %s\n", fusert_last_error());
    CHECK(strstr(fusert_last_error(), "/nonexistent/libcuda.so.1") != NULL, "message '%s'",
          fusert_last_error());
    CHECK(fn == NULL && prog.functions[0] == NULL, "nothing may be loaded");
    /* asked again: the same answer (decided once), no crash */
    fusert_clear_error();
    CHECK_STATUS(fusert_program_kernel(&prog, 0, &fn), FUSERT_ERROR_NO_DEVICE);
    CHECK(fusert_last_error()[0] != 0, "second failure without a message");

    int sms = -1;
    CHECK_STATUS(fusert_device_sm_count(&sms), FUSERT_ERROR_NO_DEVICE);
    void *p = NULL;
    CHECK_STATUS(fusert_alloc_async(&p, 256, NULL), FUSERT_ERROR_NO_DEVICE);
    CHECK_STATUS(fusert_free_async((void *)256, NULL), FUSERT_ERROR_NO_DEVICE);
    CHECK_STATUS(fusert_memset_async((void *)256, 0, 16, NULL), FUSERT_ERROR_NO_DEVICE);
    p = (void *)1;
    CHECK_STATUS(fusert_zeroed_scratch(NULL, 256, &p), FUSERT_ERROR_NO_DEVICE);
    CHECK(p == NULL, "no zeroed scratch without a device");
    CHECK_STATUS(fusert_zeroed_scratch(NULL, 256, NULL), FUSERT_ERROR_NULL_POINTER);
    CHECK_STATUS(fusert_launch((void *)1, 1, 1, 1, 32, 1, 1, 0, NULL, NULL),
                 FUSERT_ERROR_NO_DEVICE);
    CHECK_STATUS(fusert_graph_begin((fusert_stream)1), FUSERT_ERROR_NO_DEVICE);
    fusert_graph *g;
    CHECK_STATUS(fusert_graph_end((fusert_stream)1, &g), FUSERT_ERROR_NO_DEVICE);

    /* NVRTC does not need the driver: the arch comes from FUSERT_ARCH. */
    void *cubin = NULL;
    size_t n = 0;
    CHECK_STATUS(fusert_compile("nodev", prog.source, NULL, &cubin, &n), FUSERT_SUCCESS);
    CHECK(rt_is_elf(cubin, n), "not a CUBIN");
    free(cubin);
    return rt_done("test_fusert_nodevice");
}
