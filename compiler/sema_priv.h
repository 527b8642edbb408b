/* sema_priv.h -- the state sema.c and sema_import.c share: the files
 * read, the fns they define, and the entry point being built. */
#ifndef FUSEC_SEMA_PRIV_H
#define FUSEC_SEMA_PRIV_H
#include "frontend.h"

typedef struct Unit {
    const char *path;  /* as opened */
    const char *canon; /* realpath, the identity of the file */
    int loading;       /* on the import stack right now */
} Unit;

typedef struct FnInfo {
    AstFn *fn;
    int is_main;  /* defined in the main file: an entry point */
    int active;   /* being inlined right now (recursion check) */
    int errored;  /* errors were reported inside it: do not repeat them */
    int warned;   /* unused-name warnings already given */
} FnInfo;

typedef struct Sema {
    Arena *a;
    const SemaOptions *opt;
    IrModule *mod;
    Unit *units;
    int nunits, capunits;
    int *loadstack;
    int nload, capload;
    FnInfo *fns;
    int nfns, capfns;
    int capdeps, capmodfns;
    FnInfo **calls; /* the inlining stack, for recursion chains */
    int ncalls, capcalls;
    IrFunc *f;      /* the entry point being built */
    int *define_used; /* per -D: some fn has that dim */
} Sema;

/* sema_import.c: load a file (the main file, then each import depth
 * first), register its fns, and find a fn by name. */
void sema_load_file(Sema *S, AstFile *file, const char *path, const char *canon, int is_main);
FnInfo *sema_find_fn(Sema *S, const char *name);
/* realpath of PATH in the arena, or PATH itself when it has none. */
const char *sema_canonical(Arena *a, const char *path);

/* sema.c: NAME is a builtin (an op, cast, unsqueeze), which no fn may take. */
int sema_is_builtin_name(const char *name);

#endif
