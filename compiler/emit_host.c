/* STUB: replaced by the codegen helper. */
#include "emit.h"
void emit_host_source(Buf *out, Plan **plans, int nplans, const EmitOptions *o) { (void)out; (void)plans; (void)nplans; (void)o; }
void emit_header(Buf *out, Plan **plans, int nplans, const EmitOptions *o) { (void)out; (void)plans; (void)nplans; (void)o; }
