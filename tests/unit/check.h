/* check.h -- the few lines every C unit test shares: CHECK(cond) counts a
 * check and reports a failure with its file and line; main() ends with
 * `return check_summary("name");`. */
#ifndef FUSEC_TEST_CHECK_H
#define FUSEC_TEST_CHECK_H
#include <stdio.h>

static int failures, checks;

#define CHECK(cond) check((cond), __FILE__, __LINE__, #cond)
static void check(int ok, const char *file, int line, const char *what)
{
    checks++;
    if (!ok) {
        failures++;
        fprintf(stderr, "%s:%d: FAILED: %s\n", file, line, what);
    }
}

#endif
