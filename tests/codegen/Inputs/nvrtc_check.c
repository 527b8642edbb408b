/* nvrtc_check.c -- the `nvrtc-check` test tool: compile one CUDA source file
 * with NVRTC for one architecture (default sm_90) and print the log.
 *
 *   nvrtc-check [--arch=sm_XX] [NVRTC option...] FILE.cu
 *
 * Prints "nvrtc-check: FILE: ok, N bytes of CUBIN" and exits 0 when NVRTC
 * accepts the source; prints the log and exits 1 when it does not (2 for
 * bad usage or I/O).  No GPU is needed: this is what fusert does at run
 * time for the nvrtc target, short of loading the module.  The toolkit's
 * include folder is passed as -I so that cuda_fp16.h and friends resolve. */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(int argc, char **argv)
{
    const char *arch = "sm_90", *path = NULL;
    const char *opts[64];
    int nopts = 0;
    char archopt[64];
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--arch=", 7) == 0)
            arch = argv[i] + 7;
        else if (argv[i][0] == '-' && argv[i][1] != 0 && nopts < 60)
            opts[nopts++] = argv[i];
        else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: nvrtc-check [--arch=sm_XX] [NVRTC option...] FILE.cu\n");
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

    nvrtcProgram prog;
    nvrtcResult r = nvrtcCreateProgram(&prog, src, path, 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        fprintf(stderr, "nvrtc-check: %s\n", nvrtcGetErrorString(r));
        free(src);
        return 2;
    }
    r = nvrtcCompileProgram(prog, nopts, opts);
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
    }
    nvrtcDestroyProgram(&prog);
    free(src);
    return rc;
}
