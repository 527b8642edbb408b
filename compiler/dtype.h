/* dtype.h -- element types and their properties. */
#ifndef FUSEC_DTYPE_H
#define FUSEC_DTYPE_H

/* Ordered by promotion rank: bool < integers < floats, wider wins;
 * f16 with bf16 promotes to f32 (dtype_promote). */
typedef enum {
    DT_BOOL,
    DT_I32,
    DT_I64,
    DT_F16,
    DT_BF16,
    DT_F32,
    DT_F64,
    DT_COUNT
} DType;

const char *dtype_name(DType t);        /* "f32" */
const char *dtype_ctype(DType t);       /* C storage type: "float", "__half" is not used:
                                           f16/bf16 are "uint16_t" in host code */
int dtype_size(DType t);                /* bytes */
int dtype_is_float(DType t);
int dtype_is_int(DType t);              /* i32, i64 (not bool) */
DType dtype_promote(DType a, DType b);  /* NumPy-like rules of docs/language.md */
int dtype_from_name(const char *s, DType *out); /* 1 if s names a dtype */

#endif
