/* frontend.h -- parse (grammar/) and sema (sema.c): bytes to IR. */
#ifndef FUSEC_FRONTEND_H
#define FUSEC_FRONTEND_H
#include "arena.h"
#include "ast.h"
#include "ir.h"
#include <stdio.h>

/* Parse one source text already registered with diag_add_file.  Returns
 * NULL after reporting errors (lexical, syntax, nesting too deep, bad
 * UTF-8...).  Never crashes on any bytes. */
AstFile *parse_source(Arena *a, int file);

/* Read a file (or "-" for stdin) into the arena, register it with diag,
 * and parse it.  Errors reading it are reported at `from` (the import
 * that named it) or without a location. */
AstFile *parse_path(Arena *a, const char *path, Loc from);

/* --emit=ast: a stable indented dump. */
void ast_print(FILE *out, const AstFile *f);

typedef struct SemaDefine {
    const char *name;
    int64_t size;
} SemaDefine;

typedef struct SemaOptions {
    const char **include_dirs; /* -I, searched after the importing file's folder */
    int ninclude;
    SemaDefine *defines;       /* -D NAME=SIZE: symbolic dim NAME becomes static */
    int ndefines;
    int warn_unused;           /* default 1 */
    const char *prefix;        /* --prefix: the main file's fns are exported as prefix + name */
} SemaOptions;

/* Resolve imports, names, dtypes and shapes; inline fn calls; build one
 * IrFunc per fn of the main file (ir_optimize already run).  Returns NULL
 * if any error was reported. */
IrModule *sema_program(Arena *a, AstFile *main_file, const SemaOptions *opt);

/* cnames.c: why NAME cannot be a C function of the generated header (a C or
 * C++ keyword, a name the C library or CUDA headers declare, a reserved
 * namespace), or NULL. */
const char *c_name_clash(const char *name);
/* why NAME cannot start the names derived from it (NAME_ws, NAME_packed,
 * ...: NAME_ is in a reserved namespace), or NULL */
const char *c_name_stem_clash(const char *name);
/* why --prefix=PREFIX is refused (every name it starts is reserved, or it
 * is the stem of the CUDA APIs' names), or NULL */
const char *c_prefix_clash(const char *prefix);
/* NAME is a C or C++ keyword or an object-like macro of the headers the
 * output includes: no identifier of the generated code can be spelled so */
int c_name_unspellable(const char *name);
/* NAME is in fusec's own namespace (fusec_, fusert_, fz_, fzk_, capitals) */
int c_name_ours(const char *name);
/* NAME is reserved for the C implementation ('__', or '_' and a capital) */
int c_name_c_reserved(const char *name);
int c_name_table_sorted(void); /* for the unit test */

#endif
