/* STUB: replaced by the kernel codegen helper. */
#include "emit.h"
void emit_cuda_kernels(Buf *out, Plan **plans, int nplans, const EmitOptions *o) { (void)out; (void)plans; (void)nplans; (void)o; }
void emit_cuda_launchers(Buf *out, Plan **plans, int nplans, const EmitOptions *o) { (void)out; (void)plans; (void)nplans; (void)o; }
void emit_cuda_kernel_names(Buf *out, Plan **plans, int nplans, const EmitOptions *o) { (void)out; (void)plans; (void)nplans; (void)o; }
