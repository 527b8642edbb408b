/* STUB: replaced by the sema helper. */
#include "frontend.h"
IrModule *sema_program(Arena *a, AstFile *main_file, const SemaOptions *opt) { (void)a; (void)main_file; (void)opt; ICE("sema not written yet"); }
