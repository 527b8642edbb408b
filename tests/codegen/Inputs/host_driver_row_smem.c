/* host_driver_row_smem.c -- calls the generated softmax (nvrtc target,
 * linked with fake_fusert.c: 132 multiprocessors, 232448 bytes of shared
 * memory a block, 50 MiB of L2) at long odd rows, which take the windowed
 * looped kernel or the row held in shared memory (host-row-smem.test says
 * which, by the fake's settings); the fake prints each launch and its
 * shared bytes.  The buffers are never
 * read: the fake runs no kernel. */
#include "softmax.h"
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    static const struct {
        int64_t n, m;
        int off; /* both pointers this many elements into their buffers */
    } cases[] = {
        {4096, 16387, 0}, /* odd; in shared memory, two rows a multiprocessor */
        {1335, 50257, 0}, /* odd; in shared memory, one row */
        {3, 50257, 0},    /* odd, three rows: all in flight at once */
        {3, 40000, 1},    /* whole vectors, one element off */
        {3, 40000, 0},    /* aligned: the cluster (_r262144c) */
        {3, 57343, 0},    /* odd, past what a block holds */
    };
    float *x = aligned_alloc(256, 512), *y = aligned_alloc(256, 512);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        printf("-- N=%lld M=%lld offset %d\n", (long long)cases[i].n, (long long)cases[i].m, cases[i].off);
        fusert_status st = softmax(x + cases[i].off, y + cases[i].off, cases[i].n, cases[i].m, NULL);
        if (st != FUSERT_SUCCESS)
            printf("%s: %s\n", fusert_status_name(st), fusert_last_error());
    }
    free(x);
    free(y);
    return 0;
}
