/* test_fusert_devices.c -- one program on several devices at once, without
 * a GPU: fusert over the fake driver's two devices (Inputs/fake_libcuda.c),
 * NVRTC for real.  Threads, several per device, all started together, ask
 * for every kernel of one per-kernel program.  Each must get a function of
 * its own device; each kernel is loaded exactly once per device; it is
 * compiled once in all (the cache key holds the arch, not the device), and
 * the other device finds it in the cache.  Then a whole-module program the
 * same way.  The generated code's outputs on several real GPUs are checked
 * by tests/gpu/multi-gpu.test.
 *
 * RUN: %rtbin/test_fusert_devices | FileCheck %s
 * CHECK: per kernel: 2 devices x 3 kernels loaded by 8 threads: 6 loads, 3 compiles, 3 hits
 * CHECK: whole module: 2 devices x 3 kernels loaded by 8 threads: 2 loads, 1 compiles, 1 hits
 * CHECK-NOT: FAIL
 * CHECK: test_fusert_devices: all {{[0-9]+}} checks passed
 */
#include "rt_test.h"
#include <dlfcn.h>
#include <pthread.h>

#ifndef FAKE_LIBCUDA
#error "FAKE_LIBCUDA: the path of the fake driver (tests/CMakeLists.txt sets it)"
#endif

#define DEVICES 2 /* the fake's */
#define PER_DEVICE 4
#define THREADS (DEVICES * PER_DEVICE)

#define GUARDED(i, name, body)                                                 \
    "#if !defined(FUSERT_KERNEL) || FUSERT_KERNEL == " #i "\n"                 \
    "extern \"C\" __global__ void " name "(float *y) { " body " }\n"           \
    "#endif\n"
static const char source[] =
    GUARDED(0, "d_a", "y[threadIdx.x] = 1.0f;")
    GUARDED(1, "d_b", "y[threadIdx.x] *= 2.0f;")
    GUARDED(2, "d_c", "y[threadIdx.x] += 3.0f;");
static const char *const names[] = {"d_a", "d_b", "d_c"};

static int (*loads)(void), (*function_device)(void *f);
static const char *(*function_name)(void *f);
static void (*use_device)(int d);

static void bind_fake(void)
{
    void *h = dlopen(FAKE_LIBCUDA, RTLD_NOW | RTLD_LOCAL);
    void *p[4] = {NULL, NULL, NULL, NULL};
    if (h) {
        p[0] = dlsym(h, "fake_module_loads");
        p[1] = dlsym(h, "fake_function_device");
        p[2] = dlsym(h, "fake_function_name");
        p[3] = dlsym(h, "fake_use_device");
    }
    if (!p[0] || !p[1] || !p[2] || !p[3]) {
        printf("FAIL cannot use the fake driver %s\n", FAKE_LIBCUDA);
        exit(1);
    }
    memcpy(&loads, &p[0], sizeof p[0]);
    memcpy(&function_device, &p[1], sizeof p[1]);
    memcpy(&function_name, &p[2], sizeof p[2]);
    memcpy(&use_device, &p[3], sizeof p[3]);
}

typedef struct job {
    pthread_t thread;
    fusert_program *prog;
    int index, dev, bad;
    void *fns[3];
} job;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go;

static void *run(void *arg)
{
    job *j = arg;
    pthread_mutex_lock(&mu);
    while (!go)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    use_device(j->dev);
    /* threads of one device take the kernels in different orders */
    for (int k = 0; k < 3; k++) {
        int i = (k + j->index) % 3;
        if (fusert_program_kernel(j->prog, i, &j->fns[i]) != FUSERT_SUCCESS) {
            printf("FAIL device %d kernel %d: %s\n", j->dev, i, fusert_last_error());
            j->bad = 1;
        }
    }
    return NULL;
}

static void check_program(const char *what, fusert_program *p, int want_loads, int want_compiles)
{
    static job jobs[THREADS];
    fusert_cache_stats before, now;
    fusert_get_cache_stats(&before);
    int l0 = loads();
    go = 0;
    for (int t = 0; t < THREADS; t++) {
        jobs[t] = (job){.prog = p, .index = t, .dev = t % DEVICES};
        pthread_create(&jobs[t].thread, NULL, run, &jobs[t]);
    }
    pthread_mutex_lock(&mu);
    go = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    for (int t = 0; t < THREADS; t++)
        pthread_join(jobs[t].thread, NULL);
    fusert_get_cache_stats(&now);
    for (int t = 0; t < THREADS; t++) {
        CHECK(!jobs[t].bad, "%s: thread %d failed", what, t);
        for (int i = 0; i < 3; i++) {
            void *f = jobs[t].fns[i], *first = jobs[jobs[t].dev].fns[i];
            CHECK(f && function_device(f) == jobs[t].dev && strcmp(function_name(f), names[i]) == 0,
                  "%s: thread %d (device %d) kernel %d: device %d, %s", what, t, jobs[t].dev, i,
                  function_device(f), function_name(f));
            CHECK(f == first, "%s: device %d kernel %d loaded twice", what, jobs[t].dev, i);
        }
    }
    int l = loads() - l0;
    unsigned long long compiles = now.compiles - before.compiles, hits = now.hits - before.hits;
    CHECK(l == want_loads, "%s: %d loads, want %d", what, l, want_loads);
    CHECK(compiles == (unsigned long long)want_compiles && hits == compiles * (DEVICES - 1),
          "%s: %llu compiles, %llu hits", what, compiles, hits);
    printf("%s: %d devices x 3 kernels loaded by %d threads: %d loads, %llu compiles, %llu hits\n",
           what, DEVICES, THREADS, l, compiles, hits);
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

    static fusert_program per = {.name = "devs", .source = source, .kernels = names,
                                 .nkernels = 3, .per_kernel = 1};
    check_program("per kernel", &per, DEVICES * 3, 3);
    static fusert_program whole = {.name = "devs_whole", .source = source, .kernels = names,
                                   .nkernels = 3};
    check_program("whole module", &whole, DEVICES, 1);
    rt_rmtree(dir);
    return rt_done("test_fusert_devices");
}
