/* main.c -- calls k_softmax, softmax.fuse's fn built with PREFIX k_.  A NULL
 * pointer is refused before any GPU is needed, so it runs without one. */
#include "softmax.h"
#include <stdio.h>

int main(void)
{
    fusert_status s = k_softmax(NULL, NULL, 2, 3, NULL);
    printf("k_softmax(NULL, ...): %s: %s\n", fusert_status_name(s), fusert_last_error());
    return s == FUSERT_ERROR_NULL_POINTER ? 0 : 1;
}
