/* multi_gpu_fns.h -- the generated functions of multi_gpu.fuse for one
 * target, as a table: both targets define the same names, so each is
 * reached through a table of its own (multi_gpu_glue.c). */
#ifndef MULTI_GPU_FNS_H
#define MULTI_GPU_FNS_H
#include "fusert.h"
#include <stdint.h>

typedef struct mg_fns {
    const char *target;
    fusert_status (*softmax)(const float *x, float *y, int64_t n, int64_t m, fusert_stream s);
    fusert_status (*sum_abs)(const float *x, float *y, int64_t n, fusert_stream s);
    fusert_status (*colsum)(const float *x, float *y, int64_t n, int64_t m, fusert_stream s);
    fusert_status (*bias_relu)(const float *x, const float *b, float *y, int64_t n, int64_t m,
                               fusert_stream s);
} mg_fns;

extern const mg_fns mg_cuda, mg_nvrtc;
#endif
