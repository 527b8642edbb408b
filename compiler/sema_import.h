/* sema_import.h -- the files of a program and the fns they define
 * (sema_import.c), and the state of the checker built on them (sema.c):
 * both read and fill one Sema. */
#ifndef FUSEC_SEMA_IMPORT_H
#define FUSEC_SEMA_IMPORT_H
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

#endif
