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

#endif
