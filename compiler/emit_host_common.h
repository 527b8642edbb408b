/* emit_host_common.h -- private to the host emitters (emit_header.c,
 * emit_host.c, emit_host_common.c): the facts about one fn that both the
 * header and the entry functions are written from, so that the two agree
 * on every name, C type and signature. */
#ifndef FUSEC_EMIT_HOST_COMMON_H
#define FUSEC_EMIT_HOST_COMMON_H
#include "emit.h"
#include "emit_writer.h"

/* ---- the emitter context ------------------------------------------------ */
/* Lines go through emit_writer.h's Emitter, as the kernel source's do. */

/* A declaration at file level, broken after ", " to stay within 100 columns. */
void host_wrapped(Emitter *e, const char *text);

/* ---- per-fn facts --------------------------------------------------------- */

typedef struct FnInfo {
    const Plan *plan;
    const IrFunc *fn;
    const char *name;      /* the fn's C name */
    const char **pname;    /* C names of params (by param index) */
    const char **rname;    /* C names of results */
    const char **dname;    /* C names of syms */
    int *pbuf;             /* param index -> index in the packed buffer list, or -1 (scalar) */
    int ntensors;          /* tensor params */
    int nscalars;          /* scalar params */
    IrNode **inter;        /* intermediates: values stored by one kernel and read by another */
    int ninter, capinter;
    int line;              /* source line of the fn, 0 if unknown */
    const char *file;      /* basename of its source file */
} FnInfo;

void host_fn_info(Arena *a, const Plan *p, FnInfo *fi);
const char *host_base_name(const char *path);
/* The node whose buffer a value reads (a view moves no data). */
IrNode *host_storage_of(IrNode *n);
/* Index of n among f's results / fi's intermediates, or -1. */
int host_result_of(const IrFunc *f, const IrNode *n);
int host_inter_of(const FnInfo *fi, const IrNode *n);
int host_is_scalar_param(const IrFunc *f, const IrNode *n);
/* Whether dim s is fixed by -D (and so not passed to the typed entries). */
int host_sym_is_static(const IrFunc *f, int s);

/* ---- text of types and values ---------------------------------------------- */

const char *host_elem_ctype(DType t);
const char *host_scalar_ctype(DType t);
void host_put_value(Buf *b, double v, DType t);
const char *host_type_text(Arena *a, const IrFunc *f, DType t, const IrShape *s);
const char *host_signature(Arena *a, const IrFunc *f);
const char *host_typed_params(Arena *a, const FnInfo *fi);
const char *host_dim_params(Arena *a, const FnInfo *fi, int with_names_only);

#endif
