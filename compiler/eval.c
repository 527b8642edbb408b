/* STUB: replaced by the interpreter helper. */
#include "interp.h"
int eval_command(const IrModule *m, const EvalArgs *args) { (void)m; (void)args; ICE("eval not written yet"); }
