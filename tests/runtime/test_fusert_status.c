/* test_fusert_status.c -- statuses, names and the thread-local last error,
 * plus the argument checks that need no device.
 *
 * RUN: %rtbin/test_fusert_status | FileCheck %s
 * CHECK-NOT: FAIL
 * CHECK: test_fusert_status: all {{[0-9]+}} checks passed
 */
#include "rt_test.h"
#include <pthread.h>

static void *other_thread(void *arg)
{
    /* The last error is per thread: a fresh thread sees none. */
    *(int *)arg = fusert_last_error()[0] == 0;
    fusert_set_error(FUSERT_ERROR_CUDA, "set on the other thread");
    return NULL;
}

int main(void)
{
    /* Every status has its own name; unknown values do not crash. */
    static const struct { fusert_status s; const char *name; } names[] = {
        {FUSERT_SUCCESS, "FUSERT_SUCCESS"},
        {FUSERT_ERROR_INVALID_VALUE, "FUSERT_ERROR_INVALID_VALUE"},
        {FUSERT_ERROR_NULL_POINTER, "FUSERT_ERROR_NULL_POINTER"},
        {FUSERT_ERROR_SHAPE_MISMATCH, "FUSERT_ERROR_SHAPE_MISMATCH"},
        {FUSERT_ERROR_NO_DEVICE, "FUSERT_ERROR_NO_DEVICE"},
        {FUSERT_ERROR_COMPILE, "FUSERT_ERROR_COMPILE"},
        {FUSERT_ERROR_OUT_OF_MEMORY, "FUSERT_ERROR_OUT_OF_MEMORY"},
        {FUSERT_ERROR_LAUNCH, "FUSERT_ERROR_LAUNCH"},
        {FUSERT_ERROR_CUDA, "FUSERT_ERROR_CUDA"},
        {FUSERT_ERROR_CACHE, "FUSERT_ERROR_CACHE"},
        {FUSERT_ERROR_WORKSPACE_TOO_SMALL, "FUSERT_ERROR_WORKSPACE_TOO_SMALL"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        CHECK(strcmp(fusert_status_name(names[i].s), names[i].name) == 0, "%s named %s",
              names[i].name, fusert_status_name(names[i].s));
    CHECK(strcmp(fusert_status_name((fusert_status)99), "FUSERT_ERROR_UNKNOWN") == 0, "got %s",
          fusert_status_name((fusert_status)99));

    /* set_error formats, returns its status; clear empties. */
    CHECK(fusert_last_error()[0] == 0, "a fresh thread has no error, got '%s'", fusert_last_error());
    fusert_status s = fusert_set_error(FUSERT_ERROR_SHAPE_MISMATCH, "dim %s is %lld, expected %d",
                                       "N", 7LL, 8);
    CHECK(s == FUSERT_ERROR_SHAPE_MISMATCH, "returned %d", (int)s);
    CHECK(strcmp(fusert_last_error(), "dim N is 7, expected 8") == 0, "message '%s'",
          fusert_last_error());
    fusert_clear_error();
    CHECK(fusert_last_error()[0] == 0, "clear left '%s'", fusert_last_error());


    /* Very long messages (NVRTC logs) are cut, and say so. */
    size_t big = 100000;
    char *longmsg = malloc(big + 1);
    memset(longmsg, 'x', big);
    longmsg[big] = 0;
    fusert_set_error(FUSERT_ERROR_COMPILE, "%s", longmsg);
    size_t len = strlen(fusert_last_error());
    CHECK(len > 1000 && len < big, "length %zu", len);
    CHECK(strstr(fusert_last_error(), "(truncated)") != NULL, "no truncation marker");
    free(longmsg);

    /* Thread-local: another thread starts clean and does not clobber ours. */
    fusert_set_error(FUSERT_ERROR_LAUNCH, "mine");
    int clean = 0;
    pthread_t t;
    pthread_create(&t, NULL, other_thread, &clean);
    pthread_join(t, NULL);
    CHECK(clean, "the other thread saw an error it did not set");
    CHECK(strcmp(fusert_last_error(), "mine") == 0, "ours became '%s'", fusert_last_error());

    /* Argument checks that never reach the driver. */
    CHECK_STATUS(fusert_program_kernel(NULL, 0, NULL), FUSERT_ERROR_NULL_POINTER);
    CHECK(strstr(fusert_last_error(), "NULL") != NULL, "message '%s'", fusert_last_error());
    static const char *const kn[] = {"k"};
    fusert_program p = {.name = "m", .source = "", .kernels = kn, .nkernels = 1};
    void *fn = NULL;
    CHECK_STATUS(fusert_program_kernel(&p, 1, &fn), FUSERT_ERROR_INVALID_VALUE);
    CHECK(strstr(fusert_last_error(), "kernel index 1 is out of range") != NULL, "message '%s'",
          fusert_last_error());
    CHECK_STATUS(fusert_program_kernel(&p, -1, &fn), FUSERT_ERROR_INVALID_VALUE);
    CHECK_STATUS(fusert_launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL), FUSERT_ERROR_NULL_POINTER);
    CHECK_STATUS(fusert_device_sm_count(NULL), FUSERT_ERROR_NULL_POINTER);
    void *ptr = (void *)1;
    CHECK_STATUS(fusert_alloc_async(&ptr, 0, NULL), FUSERT_SUCCESS);
    CHECK(ptr == NULL, "zero bytes give NULL");
    CHECK_STATUS(fusert_alloc_async(NULL, 16, NULL), FUSERT_ERROR_NULL_POINTER);
    CHECK_STATUS(fusert_free_async(NULL, NULL), FUSERT_SUCCESS);
    CHECK_STATUS(fusert_memset_async(NULL, 0, 0, NULL), FUSERT_SUCCESS);
    CHECK_STATUS(fusert_memset_async(NULL, 0, 4, NULL), FUSERT_ERROR_NULL_POINTER);
    CHECK_STATUS(fusert_graph_begin(NULL), FUSERT_ERROR_INVALID_VALUE);
    CHECK(strstr(fusert_last_error(), "default (NULL) stream") != NULL, "message '%s'",
          fusert_last_error());
    fusert_graph *g = (fusert_graph *)1;
    CHECK_STATUS(fusert_graph_end(NULL, &g), FUSERT_ERROR_INVALID_VALUE);
    CHECK(g == NULL, "graph_end clears *out on failure");
    CHECK_STATUS(fusert_graph_launch(NULL, NULL), FUSERT_ERROR_NULL_POINTER);
    fusert_graph_destroy(NULL);
    void *cubin;
    size_t n;
    CHECK_STATUS(fusert_compile("m", NULL, NULL, &cubin, &n), FUSERT_ERROR_NULL_POINTER);
    fusert_get_cache_stats(NULL);
    return rt_done("test_fusert_status");
}
