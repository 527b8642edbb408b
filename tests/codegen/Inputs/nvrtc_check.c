/* nvrtc_check.c -- the `nvrtc-check` test tool: compile one CUDA source file
 * with NVRTC for one architecture (default sm_90) and print the log.
 *
 *   nvrtc-check [--arch=sm_XX] [--functions] [--repeat=N] [NVRTC option...] FILE.cu
 *
 * Prints "nvrtc-check: FILE: ok, N bytes of CUBIN" and exits 0 when NVRTC
 * accepts the source; prints the log and exits 1 when it does not (2 for
 * bad usage or I/O).  No GPU is needed: this is what fusert does at run
 * time for the nvrtc target, short of loading the module.  The toolkit's
 * include folder is passed as -I so that cuda_fp16.h and friends resolve.
 *
 * --functions: then one line per function symbol of the CUBIN, in symbol
 *   table order: "kernel NAME" for an entry point (a __global__), "function
 *   NAME" for a device function that was not inlined.  The codegen tests use
 *   it to see which kernels a -DFUSERT_KERNEL=<i> compile leaves.
 * --repeat=N: compile N times in this process and print the first
 *   nvrtcCompileProgram time and the best of the others ("compile ms: first
 *   F best B"); the first includes NVRTC's one-time start-up.  For the
 *   compile-time figures of docs/benchmarks.md. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "cubin_functions.h" /* tests/common */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef NVRTC_CHECK_CUDA_INCLUDE
#define NVRTC_CHECK_CUDA_INCLUDE "/usr/local/cuda/include"
#endif

static char *read_all(const char *path)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0, n;
    char *buf = malloc(cap);
    while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 2) {
            char *grown = realloc(buf, cap * 2);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    if (f != stdin)
        fclose(f);
    if (buf)
        buf[len] = 0;
    return buf;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void print_function(const char *name, int is_kernel, void *ctx)
{
    (void)ctx;
    printf("%s %s\n", is_kernel ? "kernel" : "function", name);
}

int main(int argc, char **argv)
{
    const char *arch = "sm_90", *path = NULL;
    const char *opts[64];
    int nopts = 0, functions = 0, repeat = 1;
    char archopt[64];
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--arch=", 7) == 0)
            arch = argv[i] + 7;
        else if (strcmp(argv[i], "--functions") == 0)
            functions = 1;
        else if (strncmp(argv[i], "--repeat=", 9) == 0 && atoi(argv[i] + 9) > 0)
            repeat = atoi(argv[i] + 9);
        else if (argv[i][0] == '-' && argv[i][1] != 0 && nopts < 60)
            opts[nopts++] = argv[i];
        else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: nvrtc-check [--arch=sm_XX] [--functions] [--repeat=N] "
                        "[NVRTC option...] FILE.cu\n");
        return 2;
    }
    char *src = read_all(path);
    if (!src) {
        fprintf(stderr, "nvrtc-check: cannot read '%s'\n", path);
        return 2;
    }
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
    opts[nopts++] = archopt;
    opts[nopts++] = "-I" NVRTC_CHECK_CUDA_INCLUDE;
    opts[nopts++] = "--std=c++17";

    nvrtcProgram prog = NULL;
    nvrtcResult r = NVRTC_SUCCESS;
    double first_ms = 0, best_ms = 0;
    for (int it = 0; it < repeat && r == NVRTC_SUCCESS; it++) {
        if (prog)
            nvrtcDestroyProgram(&prog);
        r = nvrtcCreateProgram(&prog, src, path, 0, NULL, NULL);
        if (r != NVRTC_SUCCESS) {
            fprintf(stderr, "nvrtc-check: %s\n", nvrtcGetErrorString(r));
            free(src);
            return 2;
        }
        double t0 = now_ms();
        r = nvrtcCompileProgram(prog, nopts, opts);
        double ms = now_ms() - t0;
        if (it == 0)
            first_ms = ms;
        else if (it == 1 || ms < best_ms)
            best_ms = ms;
    }
    size_t logsize = 0;
    nvrtcGetProgramLogSize(prog, &logsize);
    if (logsize > 1) {
        char *log = malloc(logsize);
        if (log && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS)
            fprintf(stderr, "%s", log);
        free(log);
    }
    int rc = 0;
    if (r != NVRTC_SUCCESS) {
        fprintf(stderr, "nvrtc-check: %s: %s\n", path, nvrtcGetErrorString(r));
        rc = 1;
    } else {
        size_t cubin = 0;
        nvrtcGetCUBINSize(prog, &cubin);
        printf("nvrtc-check: %s: ok, %zu bytes of CUBIN for %s\n", path, cubin, arch);
        if (repeat > 1)
            printf("compile ms: first %.1f best %.1f (%d compiles)\n", first_ms, best_ms, repeat);
        unsigned char *img = functions && cubin ? malloc(cubin) : NULL;
        if (functions && !(img && nvrtcGetCUBIN(prog, (char *)img) == NVRTC_SUCCESS &&
                           cubin_functions(img, cubin, print_function, NULL))) {
            fprintf(stderr, "nvrtc-check: %s: cannot read the CUBIN's symbols\n", path);
            rc = 1;
        }
        free(img);
    }
    nvrtcDestroyProgram(&prog);
    free(src);
    return rc;
}
