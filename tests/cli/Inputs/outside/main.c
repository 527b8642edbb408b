/* main.c -- links the generated functions; checks that the declarations are
 * callable from C.  Without a GPU the call reports an error status. */
#include "norm.h"
#include "plain.h"
#include <stdio.h>

int main(void)
{
    fusert_status s = plain(NULL, 1.0f, NULL, 16, NULL);
    printf("plain(NULL...): %s\n", fusert_status_name(s));
    return s == FUSERT_SUCCESS; /* a NULL pointer must be refused */
}
