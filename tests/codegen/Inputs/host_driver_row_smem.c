/* host_driver_row_smem.c -- calls the generated softmax (nvrtc target,
 * linked with fake_fusert.c: 132 multiprocessors, 232448 bytes of shared
 * memory a block, an H200's L2 unless the test says another) at long odd
 * rows, which take the windowed
 * looped kernel or the row held in shared memory (host-row-smem.test says
 * which, by the fake's settings); the fake prints each launch, its
 * shared bytes and the looped kernel's wrev.  The buffers are never
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
        {4096, 22001, 0}, /* odd; 264 rows in flight, 37% of an H200's L2 */
        {4096, 25001, 0}, /* odd; 264 rows in flight, 42% of it */
        {40000, 57343, 0}, /* 2^31 elements or more: _blockw_i64 */
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
