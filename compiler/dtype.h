/* dtype.h -- element types and their properties. */
#ifndef FUSEC_DTYPE_H
#define FUSEC_DTYPE_H
#include <stdint.h>

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

/* ---- rounding a float64 value to a dtype (half.c) --------------------------
 * The one rounding used by sema, constant folding, the interpreter and the
 * .npy writer: f16, bf16 and f32 round to nearest even and overflow to inf;
 * i32 and i64 truncate toward zero, NaN gives 0 and out-of-range values
 * saturate (2^63 stands for INT64_MAX); bool is v != 0 (NaN is true). */
double round_to_dtype(double v, DType t);
/* An i64 value as an int64: round_to_dtype, then 2^63 gives INT64_MAX. */
int64_t double_to_i64(double v);
uint16_t f16_bits_from_double(double v);
double f16_bits_to_double(uint16_t h);
uint16_t bf16_bits_from_double(double v);
double bf16_bits_to_double(uint16_t h);

#endif
