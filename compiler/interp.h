/* interp.h -- the float64 reference interpreter: the oracle of every GPU test.
 *
 * Every node is evaluated in float64.  Integer and bool values are exact in
 * their dtype (C conversion with wrap-around, 0/1); a float value is rounded
 * only at an explicit cast, a constant and the fn's results (f16 and bf16
 * round-to-nearest-even, f32 by a float conversion), so its results are what
 * "evaluate op by op in float64 and round to the result dtype" means. */
#ifndef FUSEC_INTERP_H
#define FUSEC_INTERP_H
#include "ir.h"
#include <stddef.h>
#include <stdint.h>

/* A host tensor.  Values are stored as doubles already rounded to dtype
 * (integers beyond 2^53 are not exact; sizes and indices are). */
typedef struct Tensor {
    DType dtype;
    int rank;                   /* 0: scalar */
    int64_t dims[IR_MAX_RANK];
    int64_t numel;
    double *data;               /* malloc-owned, numel entries */
} Tensor;

void tensor_free(Tensor *t);
int tensor_alloc(Tensor *t, DType dt, int rank, const int64_t *dims); /* 0 on OOM */
/* Row-major strides (in elements) of dims and their product; 0 if the
 * product overflows int64 or a dim is negative.  Allocates nothing. */
int tensor_strides(int rank, const int64_t *dims, int64_t *strides, int64_t *numel);

/* Run f: inputs[i] for f->params[i] (scalar params: rank 0 tensors).
 * Binds symbolic dims from the input shapes and checks them.  On success
 * fills outputs[0..nresults) (caller frees) and returns 1; otherwise writes
 * a message to err and returns 0. */
int interp_run(const IrFunc *f, const Tensor *inputs, Tensor *outputs, char *err, size_t errlen);
/* The same, but a run-time error of a node (integer division by zero,
 * argmax of an empty axis) sets *where to its source location and leaves
 * the place out of err; other errors set LOC_NONE. */
int interp_run_at(const IrFunc *f, const Tensor *inputs, Tensor *outputs, char *err, size_t errlen,
                  Loc *where);

/* Fill t with seeded pseudo-random values suited to its dtype (floats in
 * [-2, 2), integers in [-8, 8), bools 50/50); deterministic per seed. */
void tensor_fill_random(Tensor *t, uint64_t seed);

/* .npy files: <f2 <f4 <f8 <i4 <i8 |b1 read and written; bf16 as raw <u2
 * bits (want_dtype tells read how to interpret <u2). */
int npy_read(const char *path, DType want_dtype, Tensor *out, char *err, size_t errlen);
int npy_write(const char *path, const Tensor *t, char *err, size_t errlen); /* atomic */
/* npy_write to path, its errors naming the file `shown` (a temporary's final name) */
int npy_write_as(const char *path, const char *shown, const Tensor *t, char *err, size_t errlen);

/* --emit=eval: the command-line face of the interpreter (eval.c).
 *   fusec --emit=eval --fn NAME [--input NAME=FILE.npy | --input NAME=NUMBER]...
 *         [--seed S] [--output-dir DIR] FILE.fuse
 * Returns the process exit code; reports through diag. */
typedef struct EvalInput {
    const char *name;
    const char *value; /* a .npy path or a number, as given */
} EvalInput;

typedef struct EvalArgs {
    const char *fn;          /* NULL: the only fn of the file */
    EvalInput *inputs;
    int ninputs;
    uint64_t seed;
    const char *output_dir;  /* NULL: print the results to stdout */
} EvalArgs;

int eval_command(const IrModule *m, const EvalArgs *args);

#endif
