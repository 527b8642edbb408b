/* emit.h -- code generation: CUDA kernels (emit_cuda.c) and host code and
 * header (emit_host.c) for both targets. */
#ifndef FUSEC_EMIT_H
#define FUSEC_EMIT_H
#include "fusion.h"
#include "util.h"

typedef enum { TARGET_CUDA, TARGET_NVRTC } Target;

typedef struct EmitOptions {
    Target target;
    const char *module;      /* C identifier for the module (from the file name) */
    const char *header_name; /* what the source #includes, e.g. "softmax.h" */
    const char *source_name; /* the .fuse path, for comments */
    int fast_math;
    int atomic_reduce;       /* opt-in atomic combine for reductions */
} EmitOptions;

/* The CUDA source of every kernel of every plan (device code only; no host
 * code, no heavy includes, so NVRTC compiles it fast). */
void emit_cuda_kernels(Buf *out, Plan **plans, int nplans, const EmitOptions *o);

/* The main output: a .cu (TARGET_CUDA) or a .c (TARGET_NVRTC) with the
 * host functions, and the header declaring them. */
void emit_host_source(Buf *out, Plan **plans, int nplans, const EmitOptions *o);
void emit_header(Buf *out, Plan **plans, int nplans, const EmitOptions *o);

/* The host API (the header emit_header writes), for fn NAME:
 *
 *   fusert_status NAME(<params>, <results>, <dims>, fusert_stream stream);
 *     params in declared order: a tensor is `const T *` (device pointer),
 *       a scalar is passed by value (f16/bf16 scalars as float);
 *     results in declared order: `T *` (a scalar result: 1-element buffer);
 *     dims: int64_t for each symbolic dim, in order of first appearance
 *       (IrFunc.syms; dims made static by -D are not passed);
 *     T: float, double, int32_t, int64_t, bool, and uint16_t for f16/bf16.
 *   fusert_status NAME_ws(<same>, void *workspace, size_t workspace_bytes,
 *                         fusert_stream stream);   intermediates from the caller
 *   size_t NAME_workspace_size(<dims>);           bytes NAME_ws needs
 *   fusert_status NAME_packed(void *const *buffers, const double *scalars,
 *                             const int64_t *dims, fusert_stream stream);
 *     the generic entry for tools (fuse-run, benchmarks, ctypes):
 *     buffers = tensor params then results (device pointers), scalars =
 *     scalar params in order, dims = symbolic dims in order.
 *   int NAME_kernel_count(void);                  kernels per call
 * Intermediates are allocated stream-ordered when no workspace is given.
 * Every entry checks null pointers, negative dims and dims that disagree
 * with static sizes, and returns a status with a message
 * (fusert_last_error()).  Zero-size dims are valid and launch nothing
 * (reductions over an empty axis still write their identity). */

#endif
