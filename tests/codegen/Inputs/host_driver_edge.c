/* host_driver_edge.c -- calls the host_edge.fuse fns (nvrtc target, fake
 * fusert) and prints each status; host memory stands in for device memory. */
#include "host_edge.h"
#include <stdio.h>

static void show(const char *what, fusert_status st)
{
    printf("%s: %s%s%s\n", what, fusert_status_name(st), st ? ": " : "", st ? fusert_last_error() : "");
}

int main(void)
{
    static float in[64] __attribute__((aligned(256)));
    static float a[64] __attribute__((aligned(256))), b[64] __attribute__((aligned(256)));
    show("konst", konst(a, NULL));
    show("ident", ident(in, a, 4, NULL));
    show("twice", twice(in, a, b, 4, NULL));
    show("scal", scal(1.0f, 2, NULL, NULL));
    show("scal", scal(1.0f, 2, a, NULL));
    show("fixed", fixed(NULL, a, NULL));
    printf("counts: %d %d %d %d %d\n", konst_kernel_count(), ident_kernel_count(), twice_kernel_count(),
           scal_kernel_count(), fixed_kernel_count());
    return 0;
}
