/* host_driver_softmax.c -- calls the generated softmax entry points (nvrtc
 * target, linked with fake_fusert.c) and prints each status with its
 * message: argument checks, workspace sizing, launches, empty tensors. */
#include "softmax.h"
#include <stdio.h>
#include <stdlib.h>

static void show(const char *what, fusert_status st)
{
    printf("%s: %s: %s\n", what, fusert_status_name(st), st ? fusert_last_error() : "");
}

int main(void)
{
    float *x = aligned_alloc(256, 4096), *y = aligned_alloc(256, 4096);
    show("null x", softmax(NULL, y, 2, 3, NULL));
    show("null result", softmax(x, NULL, 2, 3, NULL));
    show("negative M", softmax(x, y, 2, -1, NULL));
    show("negative N", softmax(x, y, -5, 3, NULL));
    printf("workspace_size(-1, 3) is SIZE_MAX: %d\n", softmax_workspace_size(-1, 3) == SIZE_MAX);
    size_t need = softmax_workspace_size(2, 3);
    printf("workspace_size(2, 3) = %zu, aligned: %d\n", need, need % 256 == 0);
    if (need > 0) {
        show("small workspace", softmax_ws(x, y, 2, 3, x, need - 1, NULL));
        show("null workspace", softmax_ws(x, y, 2, 3, NULL, need, NULL));
    }
    show("null buffers", softmax_packed(NULL, NULL, NULL, NULL));
    printf("kernels: %d\n", softmax_kernel_count());
    puts("-- call");
    show("call", softmax(x, y, 2, 3, NULL));
    puts("-- call with workspace");
    void *ws = aligned_alloc(256, need ? (need + 255) / 256 * 256 : 256);
    show("ws call", softmax_ws(x, y, 2, 3, ws, need, NULL));
    puts("-- empty: no rows");
    show("empty", softmax(NULL, NULL, 0, 3, NULL));
    puts("-- packed");
    void *bufs[] = {x, y};
    int64_t dims[] = {2, 3};
    show("packed", softmax_packed(bufs, NULL, dims, NULL));
    free(ws);
    free(x);
    free(y);
    return 0;
}
