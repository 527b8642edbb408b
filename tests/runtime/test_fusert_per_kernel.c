/* test_fusert_per_kernel.c -- the per-kernel mode of fusert_program_kernel,
 * without a GPU: fusert runs over a fake driver (Inputs/fake_libcuda.c,
 * through FUSERT_LIBCUDA) that reads which kernels each loaded CUBIN holds,
 * while NVRTC compiles for real.  Checks that a per-kernel program compiles
 * and loads only the kernel asked for, once per device however many threads
 * ask, from the cache on the second device; that a whole-module program (or
 * FUSERT_WHOLE_MODULE=1) loads every kernel at once; that a broken kernel
 * does not stop the others and its message names kernel and module; and
 * that a kernel first used inside fusert_graph_begin's capture may load.
 * Also the zeroed scratch (fusert_zeroed_scratch), which needs a driver.
 *
 * RUN: %rtbin/test_fusert_per_kernel 2>%t.err | FileCheck %s
 * RUN: FileCheck %s --check-prefix=VERBOSE < %t.err
 * CHECK: compile error: NVRTC failed to compile kernel 'k_c' of module 'perk_bad' for sm_90
 * CHECK: missing kernel: cuModuleGetFunction(kernel 'k_gone' of module 'perk_names', compiled alone with -DFUSERT_KERNEL=1) failed: CUDA_ERROR_NOT_FOUND
 * CHECK: global-mode capture: cuModuleLoadData(kernel 'k_c' of module 'perk_cap', device 0) failed: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
 * CHECK-NOT: FAIL
 * CHECK: test_fusert_per_kernel: all {{[0-9]+}} checks passed
 * VERBOSE: fusert: cache miss for kernel 'k_b' of module 'perk' (sm_90)
 * VERBOSE: fusert: compiled kernel 'k_b' of module 'perk' for sm_90 with NVRTC
 * VERBOSE: fusert: kernel 'k_b' (2 of 3) of module 'perk' ready on device 0 in {{[0-9.]+}} ms
 */
#include "rt_test.h"
#include <cuda.h> /* CU_STREAM_CAPTURE_MODE_GLOBAL */
#include <dlfcn.h>
#include <pthread.h>

#ifndef FAKE_LIBCUDA
#error "FAKE_LIBCUDA: the path of the fake driver (tests/CMakeLists.txt sets it)"
#endif

/* Three small kernels, each guarded the way fusec guards its variants. */
#define GUARDED(i, name, body)                                                 \
    "#if !defined(FUSERT_KERNEL) || FUSERT_KERNEL == " #i "\n"                 \
    "extern \"C\" __global__ void " name "(float *y) { " body " }\n"           \
    "#endif\n"
static const char source[] =
    "static __device__ __forceinline__ float twice(float x) { return 2.0f * x; }\n"
    GUARDED(0, "k_a", "y[threadIdx.x] = 1.0f;")
    GUARDED(1, "k_b", "y[threadIdx.x] = twice(y[threadIdx.x]);")
    GUARDED(2, "k_c", "y[threadIdx.x] += 3.0f;");
static const char *const names[] = {"k_a", "k_b", "k_c"};

/* the fake driver's counters */
static int (*loads)(void), (*unloads)(void), (*live)(void);
static int (*module_kernels)(void *f), (*function_device)(void *f);
static const char *(*function_name)(void *f);
static void (*use_device)(int d);
static int (*max_dynamic_shared)(void *f);
static int (*begin_capture)(void *stream, int mode);

static void *sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p) {
        printf("FAIL the fake driver lacks %s\n", name);
        exit(1);
    }
    return p;
}

static void bind_fake(void)
{
    void *h = dlopen(FAKE_LIBCUDA, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("FAIL cannot load %s: %s\n", FAKE_LIBCUDA, dlerror());
        exit(1);
    }
    /* dlsym gives void *; memcpy converts it to a function pointer quietly */
#define BIND(var, name)                                                        \
    do {                                                                       \
        void *p_ = sym(h, name);                                               \
        memcpy(&var, &p_, sizeof p_);                                          \
    } while (0)
    BIND(loads, "fake_module_loads");
    BIND(unloads, "fake_module_unloads");
    BIND(live, "fake_live_modules");
    BIND(module_kernels, "fake_function_module_kernels");
    BIND(function_device, "fake_function_device");
    BIND(function_name, "fake_function_name");
    BIND(use_device, "fake_use_device");
    BIND(max_dynamic_shared, "fake_function_max_dynamic_shared");
    BIND(begin_capture, "cuStreamBeginCapture_v2");
#undef BIND
}

static fusert_cache_stats stats(void)
{
    fusert_cache_stats st;
    fusert_get_cache_stats(&st);
    return st;
}

/* Threads that ask for one kernel at once: it must be loaded once. */
#define RACERS 6
static fusert_program race_prog = {
    .name = "perk_race", .source = source, .kernels = names, .nkernels = 3, .per_kernel = 1};
static void *race_fn[RACERS];
static fusert_status race_st[RACERS];
static void *racer(void *arg)
{
    long i = (long)arg;
    race_st[i] = fusert_program_kernel(&race_prog, 2, &race_fn[i]);
    return NULL;
}

static void test_lazy(const char *dir)
{
    static fusert_program p = {
        .name = "perk", .source = source, .kernels = names, .nkernels = 3, .per_kernel = 1};
    void *fn = NULL, *again = NULL;
    int l0 = loads();
    setenv("FUSERT_VERBOSE", "1", 1);
    CHECK_STATUS(fusert_program_kernel(&p, 1, &fn), FUSERT_SUCCESS);
    unsetenv("FUSERT_VERBOSE");
    CHECK(loads() == l0 + 1, "kernel 1: %d loads", loads() - l0);
    CHECK(module_kernels(fn) == 1 && strcmp(function_name(fn), "k_b") == 0,
          "kernel 1's module holds %d kernels, first %s", module_kernels(fn), function_name(fn));
    CHECK(p.functions[0] == NULL && p.modules[0] == NULL, "the whole-module slots were filled");
    CHECK(p.kernel_functions[0] && p.kernel_functions[0][1] == fn && p.kernel_modules[0][1],
          "kernel 1's slots are empty");
    CHECK(p.kernel_functions[0][0] == NULL && p.kernel_functions[0][2] == NULL,
          "other kernels were loaded with kernel 1");
    char path[4096];
    CHECK(rt_count_files(dir, ".cubin", path, sizeof path) == 1 && strstr(path, "/perk.k_b-"),
          "cache entry: %s", path);

    /* loaded: the same function, no driver call */
    CHECK_STATUS(fusert_program_kernel(&p, 1, &again), FUSERT_SUCCESS);
    CHECK(again == fn && loads() == l0 + 1, "kernel 1 again: %d loads", loads() - l0);

    /* kernel 0: its own compile and module */
    uint64_t compiles = stats().compiles;
    CHECK_STATUS(fusert_program_kernel(&p, 0, &again), FUSERT_SUCCESS);
    CHECK(loads() == l0 + 2 && stats().compiles == compiles + 1, "kernel 0: %d loads",
          loads() - l0);
    CHECK(module_kernels(again) == 1 && strcmp(function_name(again), "k_a") == 0,
          "kernel 0's module: %d kernels, %s", module_kernels(again), function_name(again));

    /* device 1: its own load, the CUBIN from the cache (same arch) */
    uint64_t hits = stats().hits;
    use_device(1);
    CHECK_STATUS(fusert_program_kernel(&p, 1, &again), FUSERT_SUCCESS);
    CHECK(again != fn && function_device(again) == 1 && module_kernels(again) == 1,
          "device 1 got device %d's kernel", function_device(again));
    CHECK(stats().hits == hits + 1 && loads() == l0 + 3, "device 1: hits %llu, loads %d",
          (unsigned long long)(stats().hits - hits), loads() - l0);
    use_device(0);
}

static void test_race(void)
{
    int l0 = loads();
    pthread_t th[RACERS];
    for (long i = 0; i < RACERS; i++)
        pthread_create(&th[i], NULL, racer, (void *)i);
    for (int i = 0; i < RACERS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < RACERS; i++)
        CHECK(race_st[i] == FUSERT_SUCCESS && race_fn[i] == race_fn[0], "racer %d: %s", i,
              fusert_status_name(race_st[i]));
    CHECK(loads() == l0 + 1 && module_kernels(race_fn[0]) == 1, "racers: %d loads", loads() - l0);
}

static void test_whole_module(void)
{
    /* per_kernel left zero, as in programs written before the field */
    static fusert_program w = {.name = "perk_whole", .source = source, .kernels = names,
                               .nkernels = 3};
    void *fn[3];
    int l0 = loads();
    for (int i = 0; i < 3; i++)
        CHECK_STATUS(fusert_program_kernel(&w, i, &fn[i]), FUSERT_SUCCESS);
    CHECK(loads() == l0 + 1 && module_kernels(fn[0]) == 3 && strcmp(function_name(fn[2]), "k_c") == 0,
          "whole module: %d loads, %d kernels", loads() - l0, module_kernels(fn[0]));
    CHECK(w.kernel_functions[0] == NULL, "per-kernel slots used in whole-module mode");

    /* FUSERT_WHOLE_MODULE=1 overrides per_kernel */
    static fusert_program forced = {.name = "perk_forced", .source = source, .kernels = names,
                                    .nkernels = 3, .per_kernel = 1};
    setenv("FUSERT_WHOLE_MODULE", "1", 1);
    l0 = loads();
    CHECK_STATUS(fusert_program_kernel(&forced, 2, &fn[2]), FUSERT_SUCCESS);
    CHECK_STATUS(fusert_program_kernel(&forced, 0, &fn[0]), FUSERT_SUCCESS);
    CHECK(loads() == l0 + 1 && module_kernels(fn[2]) == 3, "FUSERT_WHOLE_MODULE: %d loads, %d "
          "kernels", loads() - l0, module_kernels(fn[2]));
    unsetenv("FUSERT_WHOLE_MODULE");
    /* already loaded whole: later calls use that module, per_kernel or not */
    CHECK_STATUS(fusert_program_kernel(&forced, 1, &fn[1]), FUSERT_SUCCESS);
    CHECK(loads() == l0 + 1 && module_kernels(fn[1]) == 3, "after unsetting: %d loads",
          loads() - l0);
}

static void test_errors(void)
{
    /* kernel 2 does not compile: its error names it, the others still work */
    static const char bad_source[] =
        GUARDED(0, "k_a", "y[0] = 1.0f;")
        GUARDED(1, "k_b", "y[0] = 2.0f;")
        GUARDED(2, "k_c", "y[0] = undeclared_thing;");
    static fusert_program bad = {.name = "perk_bad", .source = bad_source, .kernels = names,
                                 .nkernels = 3, .per_kernel = 1};
    void *fn = NULL;
    CHECK_STATUS(fusert_program_kernel(&bad, 2, &fn), FUSERT_ERROR_COMPILE);
    printf("compile error: %.*s\n", (int)strcspn(fusert_last_error(), "\n"), fusert_last_error());
    CHECK(strstr(fusert_last_error(), "undeclared_thing"), "no NVRTC log: %s", fusert_last_error());
    CHECK(strstr(fusert_last_error(), "perk_bad("), "the log names no file: %s", fusert_last_error());
    CHECK_STATUS(fusert_program_kernel(&bad, 0, &fn), FUSERT_SUCCESS);
    CHECK_STATUS(fusert_program_kernel(&bad, 2, &fn), FUSERT_ERROR_COMPILE); /* retried, same */

    /* a name list that disagrees with the source: the module is unloaded */
    static const char *const wrong[] = {"k_a", "k_gone", "k_c"};
    static fusert_program names_prog = {.name = "perk_names", .source = source, .kernels = wrong,
                                        .nkernels = 3, .per_kernel = 1};
    int u0 = unloads(), live0 = live();
    CHECK_STATUS(fusert_program_kernel(&names_prog, 1, &fn), FUSERT_ERROR_CUDA);
    printf("missing kernel: %s\n", fusert_last_error());
    CHECK(unloads() == u0 + 1 && live() == live0, "unloads %d, live modules %d -> %d",
          unloads() - u0, live0, live());
}

static void test_capture(void)
{
    static fusert_program p = {.name = "perk_cap", .source = source, .kernels = names,
                               .nkernels = 3, .per_kernel = 1};
    void *fn = NULL, *stream = (void *)0x1234;
    CHECK_STATUS(fusert_program_kernel(&p, 0, &fn), FUSERT_SUCCESS); /* warm */

    /* fusert_graph_begin captures in relaxed mode: a first use may load */
    int l0 = loads();
    CHECK_STATUS(fusert_graph_begin(stream), FUSERT_SUCCESS);
    CHECK_STATUS(fusert_program_kernel(&p, 1, &fn), FUSERT_SUCCESS);
    fusert_graph *g = NULL;
    CHECK_STATUS(fusert_graph_end(stream, &g), FUSERT_SUCCESS);
    fusert_graph_destroy(g);
    CHECK(loads() == l0 + 1, "kernel 1 in the capture: %d loads", loads() - l0);

    /* A capture the caller began in global mode: kernels used before are
     * served from their slots; a new one cannot load (warm up first). */
    CHECK(begin_capture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL) == 0, "global capture");
    CHECK_STATUS(fusert_program_kernel(&p, 0, &fn), FUSERT_SUCCESS);
    CHECK_STATUS(fusert_program_kernel(&p, 2, &fn), FUSERT_ERROR_CUDA);
    printf("global-mode capture: %s\n", fusert_last_error());
    CHECK_STATUS(fusert_graph_end(stream, &g), FUSERT_SUCCESS);
    fusert_graph_destroy(g);
    CHECK_STATUS(fusert_program_kernel(&p, 2, &fn), FUSERT_SUCCESS); /* after it: fine */
}

/* The zeroed scratch over the fake driver, whose device memory is host
 * memory: all zero, one region per stream, a larger one for a larger
 * request, none while the stream is being captured. */
static int all_zero(const void *p, size_t n)
{
    for (size_t i = 0; p && i < n; i++)
        if (((const unsigned char *)p)[i])
            return 0;
    return p != NULL;
}

/* A launch with dynamic shared memory opts the kernel in first: by
 * default the driver allows 48 KiB less the kernel's static shared
 * memory, so exactly 48 KiB is refused without it; the device's limit is
 * asked once. */
static void test_shared(void)
{
    static fusert_program prog = {.name = "perk_shared", .source = source, .kernels = names,
                                  .nkernels = 3, .per_kernel = 1};
    void *fn = NULL;
    int optin = 0;
    CHECK_STATUS(fusert_device_shared_optin(&optin), FUSERT_SUCCESS);
    CHECK(optin == 232448, "opt-in limit %d", optin);
    CHECK_STATUS(fusert_device_shared_optin(NULL), FUSERT_ERROR_NULL_POINTER);
    CHECK_STATUS(fusert_program_kernel(&prog, 0, &fn), FUSERT_SUCCESS);
    CHECK_STATUS(fusert_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL), FUSERT_SUCCESS);
    CHECK(max_dynamic_shared(fn) == 0, "opted in without shared memory: %d", max_dynamic_shared(fn));
    CHECK_STATUS(fusert_launch(fn, 1, 1, 1, 32, 1, 1, 48 * 1024, NULL, NULL), FUSERT_SUCCESS);
    CHECK(max_dynamic_shared(fn) == 48 * 1024, "opted in at 48 KiB: %d", max_dynamic_shared(fn));
    CHECK_STATUS(fusert_launch(fn, 1, 1, 1, 32, 1, 1, 200000, NULL, NULL), FUSERT_SUCCESS);
    CHECK(max_dynamic_shared(fn) == 200000, "opted in to %d", max_dynamic_shared(fn));
    CHECK_STATUS(fusert_launch(fn, 1, 1, 1, 32, 1, 1, 232449, NULL, NULL), FUSERT_ERROR_LAUNCH);
    printf("too much shared memory: %s\n", fusert_last_error());
    CHECK(strstr(fusert_last_error(), "MAX_DYNAMIC_SHARED_SIZE_BYTES, 232449"), "message '%s'",
          fusert_last_error());
}

/* The blocks of a kernel a multiprocessor holds, and the device's L2
 * (the windowed looped row launchers ask both): what the driver says, 0
 * where it refuses the question */
static void test_occupancy(void)
{
    static fusert_program prog = {.name = "perk_occupancy", .source = source, .kernels = names,
                                  .nkernels = 3, .per_kernel = 1};
    void *fn = NULL;
    int n = -1, l2 = 0;
    CHECK_STATUS(fusert_program_kernel(&prog, 0, &fn), FUSERT_SUCCESS);
    CHECK_STATUS(fusert_kernel_blocks_per_sm(fn, 1024, 0, &n), FUSERT_SUCCESS);
    CHECK(n == 2, "blocks of 1024: %d", n);
    CHECK_STATUS(fusert_kernel_blocks_per_sm(fn, 512, 0, &n), FUSERT_SUCCESS);
    CHECK(n == 4, "blocks of 512: %d", n);
    CHECK_STATUS(fusert_kernel_blocks_per_sm(fn, 2048, 0, &n), FUSERT_SUCCESS);
    CHECK(n == 0, "a refused block: %d", n);
    CHECK_STATUS(fusert_kernel_blocks_per_sm(NULL, 1024, 0, &n), FUSERT_ERROR_NULL_POINTER);
    CHECK_STATUS(fusert_kernel_blocks_per_sm(fn, 1024, 0, NULL), FUSERT_ERROR_NULL_POINTER);
    CHECK_STATUS(fusert_device_l2_bytes(&l2), FUSERT_SUCCESS);
    CHECK(l2 == 62914560, "L2 %d", l2);
    CHECK_STATUS(fusert_device_l2_bytes(NULL), FUSERT_ERROR_NULL_POINTER);
}

static void test_zeroed(void)
{
    void *a = NULL, *b = NULL, *c = NULL, *big = NULL, *cap = (void *)1;
    CHECK_STATUS(fusert_zeroed_scratch(NULL, 300, &a), FUSERT_SUCCESS);
    CHECK(all_zero(a, 300), "the default stream's region %p is not all zero", a);
    CHECK_STATUS(fusert_zeroed_scratch(NULL, 200, &b), FUSERT_SUCCESS);
    CHECK(b == a, "the same stream got another region: %p, then %p", a, b);
    CHECK_STATUS(fusert_zeroed_scratch((fusert_stream)0x10, 200, &c), FUSERT_SUCCESS);
    CHECK(c && c != a, "another stream got %p (the default stream's is %p)", c, a);
    CHECK_STATUS(fusert_zeroed_scratch(NULL, (size_t)1 << 20, &big), FUSERT_SUCCESS);
    CHECK(all_zero(big, (size_t)1 << 20) && big != a, "1 MiB: %p (was %p)", big, a);
    fusert_stream s = (fusert_stream)0x20;
    fusert_graph *g = NULL;
    CHECK_STATUS(fusert_graph_begin(s), FUSERT_SUCCESS);
    CHECK_STATUS(fusert_zeroed_scratch(s, 64, &cap), FUSERT_SUCCESS);
    CHECK(cap == NULL, "a region handed out during a capture: %p", cap);
    CHECK_STATUS(fusert_graph_end(s, &g), FUSERT_SUCCESS);
    fusert_graph_destroy(g);
    CHECK_STATUS(fusert_zeroed_scratch(s, 64, &cap), FUSERT_SUCCESS);
    CHECK(all_zero(cap, 64), "after the capture: %p", cap);
    CHECK_STATUS(fusert_zeroed_scratch(NULL, 8, NULL), FUSERT_ERROR_NULL_POINTER);
}

/* The plain per-stream scratch: one region per stream, kept while it is
 * large enough (no allocation per call), a larger one for a larger
 * request, none while the stream is being captured, and apart from the
 * zeroed regions. */
static void test_stream_scratch(void)
{
    void *a = NULL, *b = NULL, *c = NULL, *big = NULL, *z = NULL, *cap = (void *)1;
    CHECK_STATUS(fusert_stream_scratch((fusert_stream)0x30, 5000, &a), FUSERT_SUCCESS);
    CHECK(a != NULL, "no region for a stream");
    ((unsigned char *)a)[4999] = 7; /* the fake's device memory is host memory */
    CHECK_STATUS(fusert_stream_scratch((fusert_stream)0x30, 100, &b), FUSERT_SUCCESS);
    CHECK(b == a, "a smaller request on the same stream got another region: %p, then %p", a, b);
    CHECK_STATUS(fusert_zeroed_scratch((fusert_stream)0x30, 100, &z), FUSERT_SUCCESS);
    CHECK(all_zero(z, 100) && z != a, "the zeroed region %p shares the plain one %p", z, a);
    CHECK_STATUS(fusert_stream_scratch((fusert_stream)0x40, 100, &c), FUSERT_SUCCESS);
    CHECK(c && c != a, "another stream got %p (the first one's is %p)", c, a);
    CHECK_STATUS(fusert_stream_scratch((fusert_stream)0x30, 9000, &big), FUSERT_SUCCESS);
    CHECK(big && big != a, "9000 bytes: %p (was %p)", big, a);
    CHECK_STATUS(fusert_stream_scratch((fusert_stream)0x30, 9000, &b), FUSERT_SUCCESS);
    CHECK(b == big, "the grown region was not kept: %p, then %p", big, b);
    fusert_stream s = (fusert_stream)0x50;
    fusert_graph *g = NULL;
    CHECK_STATUS(fusert_graph_begin(s), FUSERT_SUCCESS);
    CHECK_STATUS(fusert_stream_scratch(s, 64, &cap), FUSERT_SUCCESS);
    CHECK(cap == NULL, "a region handed out during a capture: %p", cap);
    CHECK_STATUS(fusert_graph_end(s, &g), FUSERT_SUCCESS);
    fusert_graph_destroy(g);
    CHECK_STATUS(fusert_stream_scratch(s, 0, &cap), FUSERT_SUCCESS);
    CHECK(cap == NULL, "0 bytes gave %p", cap);
    CHECK_STATUS(fusert_stream_scratch(NULL, 8, NULL), FUSERT_ERROR_NULL_POINTER);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    setenv("FUSERT_LIBCUDA", FAKE_LIBCUDA, 1);
    unsetenv("FUSERT_WHOLE_MODULE");
    unsetenv("FUSERT_CACHE_DISABLE");
    unsetenv("FUSERT_VERBOSE");
    char *dir = rt_tempdir();
    if (!dir) {
        printf("FAIL no temporary directory\n");
        return 1;
    }
    setenv("FUSERT_CACHE_DIR", dir, 1);
    bind_fake();
    int sms = 0;
    CHECK_STATUS(fusert_device_sm_count(&sms), FUSERT_SUCCESS); /* the fake is in use */
    CHECK(sms == 132, "multiprocessors: %d", sms);

    test_lazy(dir);
    test_race();
    test_whole_module();
    test_errors();
    test_capture();
    test_zeroed();
    test_stream_scratch();
    test_shared();
    test_occupancy();
    rt_rmtree(dir);
    return rt_done("test_fusert_per_kernel");
}
