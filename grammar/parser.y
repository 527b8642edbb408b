/* parser.y -- the .fuse grammar (bison, pure, LALR(1), no conflicts).
 *
 * Statements and newlines: newlines are white space.  A statement starts
 * with a name or 'return' and an expression can never be followed by a name,
 * so every statement ends where its own structure ends; ';' may separate
 * statements anywhere (`t = x*1.5; u = tanh(t)`) and is otherwise ignored.
 *
 * Each action is one builder call (ast_* in compiler/parse.c); locations
 * are byte ranges (Loc) that the scanner fills and YYLLOC_DEFAULT spans.
 * Precedence, lowest first, as docs/language.md states it:
 *   ||   &&   == !=   < <= > >=   + -   * / %   unary - !   ** (right)
 * so -x**2 is -(x**2) and 2**-x is allowed.
 *
 * Syntax errors use `parse.error custom` with LAC (so the expected set is
 * exact, not blurred by default reductions): yyreport_syntax_error turns the
 * set of expected tokens into words ("expected an expression") and adds
 * "to close '(' opened here" from the scanner's bracket stack.  Parsing
 * stops at the first syntax error of a file. */

%define api.pure full
%define api.token.prefix {TOK_}
%define api.location.type {Loc}
%define parse.error custom
%define parse.lac full
%locations
%expect 0

%code requires {
#include "parse_priv.h"
typedef void *yyscan_t;
}

%param { yyscan_t scanner } { ParseCtx *ps }

%code provides {
int yylex(YYSTYPE *lval, YYLTYPE *lloc, yyscan_t scanner, ParseCtx *ps);
int lex_token(YYSTYPE *lval, YYLTYPE *lloc, yyscan_t scanner); /* lexer.l */
}

%code {
#include "ir.h"
#include <stdio.h>
#include <string.h>

/* A rule's span: from its first symbol to its last; an empty rule sits at
 * the end of what came before. */
#define YYLLOC_DEFAULT(Cur, Rhs, N)                                         \
    do {                                                                    \
        if (N) {                                                            \
            (Cur).file = YYRHSLOC(Rhs, 1).file;                             \
            (Cur).begin = YYRHSLOC(Rhs, 1).begin;                           \
            (Cur).end = YYRHSLOC(Rhs, N).end;                               \
        } else {                                                            \
            (Cur).file = YYRHSLOC(Rhs, 0).file;                             \
            (Cur).begin = (Cur).end = YYRHSLOC(Rhs, 0).end;                 \
        }                                                                   \
    } while (0)

/* The parser stack grows on the heap up to this many entries; deeper
 * input (a long run of unary minus or **) is "nested too deeply". */
#define YYMAXDEPTH 20000

static void yyerror(YYLTYPE *loc, yyscan_t scanner, ParseCtx *ps, const char *msg);
}

%union {
    const char *str;
    int dtype;
    AstExpr *expr;
    ExprList *exprs;
    ArgList *args;
    AstType *type;
    DimList *dims;
    ParamList *params;
    NameList *names;
    StmtList *stmts;
    AttrList *attrs;
}

%token <str>   NAME    "a name"
%token <expr>  NUMBER  "a number"
%token <str>   STRING  "a string"
%token <dtype> DTYPE   "a dtype"
%token FN      "'fn'"
%token RETURN  "'return'"
%token IMPORT  "'import'"
%token TRUE    "'true'"
%token FALSE   "'false'"
%token ARROW   "'->'"
%token OROR    "'||'"
%token ANDAND  "'&&'"
%token EQEQ    "'=='"
%token NEQ     "'!='"
%token LE      "'<='"
%token GE      "'>='"
%token POW     "'**'"

%left OROR
%left ANDAND
%left EQEQ NEQ
%left '<' LE '>' GE
%left '+' '-'
%left '*' '/' '%'
%precedence UNARY
%right POW

%type <expr> expr primary
%type <exprs> tuple_elems
%type <args> args arg_list
%type <type> type
%type <dims> dims
%type <params> params param_list results result_list
%type <names> targets
%type <stmts> body
%type <attrs> attrs

%%

file
    : %empty
    | file IMPORT STRING                { ast_import(ps, loc_span(@2, @3), $3); }
    | file fn
    | file ';'
    ;

fn
    : attrs FN NAME '(' params ')' ARROW results '{' body '}'
                                        { ast_fn(ps, loc_span(@2, @11), $1, $3, @3, $5, $8, $10); }
    ;

attrs
    : %empty                            { $$ = NULL; }
    | attrs '@' NAME                    { $$ = ast_attr(ps, $1, loc_span(@2, @3), $3, @3, NULL); }
    | attrs '@' NAME '(' args ')'       { $$ = ast_attr(ps, $1, loc_span(@2, @6), $3, @3, $5); }
    ;

/* ---- parameters and results ---- */

params
    : %empty                            { $$ = NULL; }
    | param_list
    | param_list ','
    ;

param_list
    : NAME ':' type                     { $$ = ast_param(ps, NULL, $1, @1, $3, NULL); }
    | NAME ':' type '=' expr            { $$ = ast_param(ps, NULL, $1, @1, $3, $5); }
    | param_list ',' NAME ':' type      { $$ = ast_param(ps, $1, $3, @3, $5, NULL); }
    | param_list ',' NAME ':' type '=' expr
                                        { $$ = ast_param(ps, $1, $3, @3, $5, $7); }
    ;

results
    : type                              { $$ = ast_result_type(ps, $1); }
    | '(' result_list ')'               { $$ = ast_named_results(ps, $2); }
    | '(' result_list ',' ')'           { $$ = ast_named_results(ps, $2); }
    ;

result_list
    : NAME ':' type                     { $$ = ast_param(ps, NULL, $1, @1, $3, NULL); }
    | result_list ',' NAME ':' type     { $$ = ast_param(ps, $1, $3, @3, $5, NULL); }
    ;

/* f32, f32[N, 1024]; an unknown dtype name gets its own message. */
type
    : DTYPE                             { $$ = ast_type(ps, @$, $1, NULL); }
    | DTYPE '[' dims ']'                { $$ = ast_type(ps, @$, $1, $3); }
    | NAME                              { $$ = ast_bad_type(ps, @$, $1, @1, NULL); }
    | NAME '[' dims ']'                 { $$ = ast_bad_type(ps, @$, $1, @1, $3); }
    ;

dims
    : NAME                              { $$ = ast_dim_name(ps, NULL, $1, @1); }
    | NUMBER                            { $$ = ast_dim_size(ps, NULL, $1, @1); }
    | dims ',' NAME                     { $$ = ast_dim_name(ps, $1, $3, @3); }
    | dims ',' NUMBER                   { $$ = ast_dim_size(ps, $1, $3, @3); }
    ;

/* ---- statements ---- */

body
    : %empty                            { $$ = NULL; }
    | body targets '=' expr             { $$ = ast_assign(ps, $1, loc_span(@2, @4), $2, $4); }
    | body RETURN expr                  { $$ = ast_return(ps, $1, loc_span(@2, @3), $3); }
    | body ';'                          { $$ = $1; }
    ;

targets
    : NAME                              { $$ = ast_names(ps, NULL, $1, @1); }
    | targets ',' NAME                  { $$ = ast_names(ps, $1, $3, @3); }
    ;

/* ---- expressions ---- */

expr
    : primary
    | expr OROR expr                    { $$ = ast_binary(ps, @$, OP_OR, $1, $3); }
    | expr ANDAND expr                  { $$ = ast_binary(ps, @$, OP_AND, $1, $3); }
    | expr EQEQ expr                    { $$ = ast_binary(ps, @$, OP_EQ, $1, $3); }
    | expr NEQ expr                     { $$ = ast_binary(ps, @$, OP_NE, $1, $3); }
    | expr '<' expr                     { $$ = ast_binary(ps, @$, OP_LT, $1, $3); }
    | expr LE expr                      { $$ = ast_binary(ps, @$, OP_LE, $1, $3); }
    | expr '>' expr                     { $$ = ast_binary(ps, @$, OP_GT, $1, $3); }
    | expr GE expr                      { $$ = ast_binary(ps, @$, OP_GE, $1, $3); }
    | expr '+' expr                     { $$ = ast_binary(ps, @$, OP_ADD, $1, $3); }
    | expr '-' expr                     { $$ = ast_binary(ps, @$, OP_SUB, $1, $3); }
    | expr '*' expr                     { $$ = ast_binary(ps, @$, OP_MUL, $1, $3); }
    | expr '/' expr                     { $$ = ast_binary(ps, @$, OP_DIV, $1, $3); }
    | expr '%' expr                     { $$ = ast_binary(ps, @$, OP_MOD, $1, $3); }
    | expr POW expr                     { $$ = ast_binary(ps, @$, OP_POW, $1, $3); }
    | '-' expr %prec UNARY              { $$ = ast_unary(ps, @$, OP_NEG, $2); }
    | '!' expr %prec UNARY              { $$ = ast_unary(ps, @$, OP_NOT, $2); }
    ;

primary
    : NUMBER
    | TRUE                              { $$ = ast_bool(ps, @$, 1); }
    | FALSE                             { $$ = ast_bool(ps, @$, 0); }
    | NAME                              { $$ = ast_name(ps, @$, $1); }
    | DTYPE                             { $$ = ast_dtype(ps, @$, $1); }
    | NAME '(' args ')'                 { $$ = ast_call(ps, @$, $1, @1, $3); }
    | '(' expr ')'                      { $$ = ast_paren(ps, @$, $2); }
    | '(' expr ',' ')'                  { $$ = ast_tuple(ps, @$, ast_exprs(ps, NULL, $2)); }
    | '(' tuple_elems ')'               { $$ = ast_tuple(ps, @$, $2); }
    | '(' tuple_elems ',' ')'           { $$ = ast_tuple(ps, @$, $2); }
    ;

/* Two or more elements: (0, 2).  One element needs its comma: (0,). */
tuple_elems
    : expr ',' expr                     { $$ = ast_exprs(ps, ast_exprs(ps, NULL, $1), $3); }
    | tuple_elems ',' expr              { $$ = ast_exprs(ps, $1, $3); }
    ;

args
    : %empty                            { $$ = NULL; }
    | arg_list
    | arg_list ','
    ;

arg_list
    : expr                              { $$ = ast_arg(ps, NULL, $1); }
    | NAME '=' expr                     { $$ = ast_kwarg(ps, NULL, $1, @1, $3); }
    | arg_list ',' expr                 { $$ = ast_arg(ps, $1, $3); }
    | arg_list ',' NAME '=' expr        { $$ = ast_kwarg(ps, $1, $3, @3, $5); }
    ;

%%

/* The scanner, seen through the parser: remember the token before the
 * lookahead, so an error about a missing token can point right after it. */
int yylex(YYSTYPE *lval, YYLTYPE *lloc, yyscan_t scanner, ParseCtx *ps)
{
    ps->cur_popped = 0;
    int t = lex_token(lval, lloc, scanner);
    ps->prev_end = ps->cur_end;
    ps->prev_tok = ps->cur_tok;
    ps->cur_end = lloc->end;
    ps->cur_tok = t;
    return t;
}

/* Bison calls this only when its stack would pass YYMAXDEPTH. */
static void yyerror(YYLTYPE *loc, yyscan_t scanner, ParseCtx *ps, const char *msg)
{
    (void)scanner;
    (void)msg;
    parse_error(ps, *loc, "expression nested too deeply (limit %d)", PARSE_MAX_NEST);
    diag_note(LOC_NONE, "split it into several statements");
}

static int has(const yysymbol_kind_t *v, int n, yysymbol_kind_t k)
{
    for (int i = 0; i < n; i++)
        if (v[i] == k)
            return 1;
    return 0;
}

/* Single-character tokens have no named symbol: compare the name "'('". */
static int is_char(yysymbol_kind_t k, char c)
{
    const char *s = yysymbol_name(k);
    return s[0] == '\'' && s[1] == c && s[2] == '\'' && s[3] == 0;
}

static int has_char(const yysymbol_kind_t *v, int n, char c)
{
    for (int i = 0; i < n; i++)
        if (is_char(v[i], c))
            return 1;
    return 0;
}

static int is_binary_op(yysymbol_kind_t k)
{
    if (k >= YYSYMBOL_OROR && k <= YYSYMBOL_POW)
        return 1;
    for (const char *c = "<>+-*/%"; *c; c++)
        if (is_char(k, *c))
            return 1;
    return 0;
}

/* A token in user words, for "expected X" and "unexpected X". */
static const char *sym_words(yysymbol_kind_t k)
{
    switch (k) {
    case YYSYMBOL_YYEOF: return "end of file";
    case YYSYMBOL_NAME: return "a name";
    case YYSYMBOL_NUMBER: return "a number";
    case YYSYMBOL_STRING: return "a string";
    case YYSYMBOL_DTYPE: return "a dtype";
    default: return yysymbol_name(k); /* the quoted alias: "')'", "'->'" */
    }
}

/* The "expected ..." text for a set of expected tokens: a few sets are
 * named after what the user was writing, the rest are listed. */
static const char *expected_words(ParseCtx *ps, const yysymbol_kind_t *exp, int n, char *buf,
                                  size_t size)
{
    int expr_start = has(exp, n, YYSYMBOL_NUMBER) && has(exp, n, YYSYMBOL_TRUE);
    if (has(exp, n, YYSYMBOL_FN))
        return "expected 'fn' or 'import'";
    if (has(exp, n, YYSYMBOL_RETURN))
        return "expected a statement ('name = expr' or 'return expr') or '}'";
    if (expr_start)
        return "expected an expression";
    if (has(exp, n, YYSYMBOL_DTYPE))
        return has_char(exp, n, '(') ? "expected a result type, such as f32[N] or (y: f32[N])"
                                        : "expected a type, such as f32 or f32[N, M]";
    if (has(exp, n, YYSYMBOL_NAME) && has(exp, n, YYSYMBOL_NUMBER))
        return "expected a dim: a name or an integer size";
    if (has(exp, n, YYSYMBOL_ARROW))
        return "expected '->' and the result type after the parameter list";
    if (has_char(exp, n, '{'))
        return "expected '{' to begin the fn body";
    if (n == 1 && is_char(exp[0], ':') && ps->prev_tok == TOK_NAME)
        return ps->in_results ? "expected ':' after result name"
                              : "expected ':' after parameter name";
    if (n == 1 && exp[0] == YYSYMBOL_NAME && ps->prev_tok == TOK_FN)
        return "expected the fn name after 'fn'";
    if (n == 1 && exp[0] == YYSYMBOL_NAME && ps->prev_tok == '@')
        return "expected an attribute name after '@'";
    if (n == 1 && exp[0] == YYSYMBOL_STRING)
        return "expected a file name in double quotes after 'import'";
    if (n == 2 && has_char(exp, n, '=') && has_char(exp, n, ','))
        return "expected '=' after the name that starts this statement";
    if (has(exp, n, YYSYMBOL_NAME) && ps->prev_tok == '(' && !ps->in_results)
        return "expected a parameter name or ')'";
    /* List them; binary operators are left out: one is always possible
     * after an expression and naming them all helps nobody. */
    size_t k = (size_t)snprintf(buf, size, "expected");
    int listed = 0, left = 0;
    for (int i = 0; i < n; i++)
        left += !is_binary_op(exp[i]);
    for (int i = 0; i < n && k < size; i++) {
        if (is_binary_op(exp[i]))
            continue;
        const char *sep = listed == 0 ? " " : listed == left - 1 ? " or " : ", ";
        k += (size_t)snprintf(buf + k, size - k, "%s%s", sep, sym_words(exp[i]));
        listed++;
    }
    if (listed == 0)
        snprintf(buf, size, "expected an operator");
    return buf;
}

/* A closer that nothing expects reads best as "unexpected ')'". */
static int is_closer(yysymbol_kind_t k, char *ch)
{
    for (const char *c = ")]}"; *c; c++)
        if (is_char(k, *c)) {
            *ch = *c;
            return 1;
        }
    return 0;
}

static char opener_of(char closer)
{
    return closer == ')' ? '(' : closer == ']' ? '[' : '{';
}

static char closer_of(char opener)
{
    return opener == '(' ? ')' : opener == '[' ? ']' : '}';
}

/* "found X": the lookahead as written (shortened), or its kind. */
static const char *found_words(ParseCtx *ps, yysymbol_kind_t look, Loc at, char *buf, size_t size)
{
    if (look == YYSYMBOL_YYEOF || at.end <= at.begin || at.end > ps->len)
        return sym_words(look);
    uint32_t n = at.end - at.begin;
    snprintf(buf, size, "'%.*s%s'", n > 24 ? 24 : (int)n, ps->text + at.begin, n > 24 ? "..." : "");
    return buf;
}

/* Syntax errors, most specific first:
 *  a. a bracket left open: the lookahead is the end of the file, sits on a
 *     later line, or closes an outer bracket, and the innermost bracket's
 *     closer would fit: "expected ')'" with a note at the '(';
 *  b. a closer that matches no open bracket: "unexpected ')'";
 *  c. anything else: "expected <what>, found <lookahead>". */
static int yyreport_syntax_error(const yypcontext_t *ctx, yyscan_t scanner, ParseCtx *ps)
{
    (void)scanner;
    yysymbol_kind_t exp[YYNTOKENS];
    int n = yypcontext_expected_tokens(ctx, exp, YYNTOKENS);
    if (n < 0)
        n = 0;
    yysymbol_kind_t look = yypcontext_token(ctx);
    Loc look_loc = *yypcontext_location(ctx);
    Loc at = look_loc;

    /* A token on a later line that starts something new (a statement, a
     * fn, a closer, the end of the file) suggests that the line before it
     * was left incomplete: the error then points right after that line's
     * last token.  Any other token is itself the mistake. */
    char ch = 0;
    int closer = look != YYSYMBOL_YYEOF && is_closer(look, &ch);
    int later_line = look == YYSYMBOL_YYEOF;
    for (uint32_t i = ps->prev_end; i < look_loc.begin && i < ps->len; i++)
        later_line |= ps->text[i] == '\n';
    int starts_new = look == YYSYMBOL_YYEOF || look == YYSYMBOL_NAME ||
                     look == YYSYMBOL_RETURN || look == YYSYMBOL_FN ||
                     look == YYSYMBOL_IMPORT || is_char(look, '@') || closer;
    int moved = later_line && starts_new && ps->prev_tok != 0;
    if (moved)
        at = (Loc){look_loc.file, ps->prev_end, ps->prev_end};

    /* The innermost bracket still open before the lookahead: a closer that
     * matched was popped by the scanner, an opener was pushed. */
    int top = ps->nopen - 1;
    if (top >= 0 && (is_char(look, '(') || is_char(look, '[') || is_char(look, '{')) &&
        ps->open[top].loc.begin == look_loc.begin)
        top--;
    if (closer && ps->cur_popped)
        top = -1; /* the lookahead closed it: not a missing closer */

    /* a. */
    if (top >= 0 && has_char(exp, n, closer_of(ps->open[top].ch))) {
        int outer = 0;
        for (int i = 0; closer && i < top; i++)
            outer |= ps->open[i].ch == opener_of(ch);
        if (moved || (look == YYSYMBOL_YYEOF) || outer) {
            Bracket *b = &ps->open[top];
            int l, c;
            parse_error(ps, at, "expected '%c'", closer_of(b->ch));
            diag_line_col(b->loc.file, b->loc.begin, &l, &c);
            diag_note(b->loc, "to close '%c' opened at %d:%d", b->ch, l, c);
            return 0;
        }
    }
    /* b. */
    if (closer && !ps->cur_popped && !has(exp, n, look)) {
        parse_error(ps, look_loc, "unexpected '%c'", ch);
        if (ps->nopen > 0)
            diag_note(ps->open[ps->nopen - 1].loc, "the innermost open bracket is this '%c'",
                      ps->open[ps->nopen - 1].ch);
        else
            diag_note(LOC_NONE, "no '%c' is open here", opener_of(ch));
        return 0;
    }
    /* c. */
    char buf[512], fbuf[64];
    const char *msg = expected_words(ps, exp, n, buf, sizeof buf);
    if (moved || look == YYSYMBOL_YYEOF)
        parse_error(ps, at, "%s", msg);
    else
        parse_error(ps, at, "%s, found %s", msg, found_words(ps, look, look_loc, fbuf, sizeof fbuf));
    if (top >= 0) {
        /* "expected ')'" alone: say which '(' it closes */
        Bracket *b = &ps->open[top];
        char want[16];
        snprintf(want, sizeof want, "expected '%c'", closer_of(b->ch));
        if (strcmp(msg, want) == 0) {
            int l, c;
            diag_line_col(b->loc.file, b->loc.begin, &l, &c);
            diag_note(b->loc, "to close '%c' opened at %d:%d", b->ch, l, c);
        }
    }
    return 0;
}
