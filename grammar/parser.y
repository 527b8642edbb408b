/* STUB: replaced by the parser helper. */
%define api.pure full
%locations
%code requires { typedef void *yyscan_t; }
%param { yyscan_t scanner }
%code { int yylex(YYSTYPE *lval, YYLTYPE *lloc, yyscan_t scanner); static void yyerror(YYLTYPE *l, yyscan_t s, const char *m) { (void)l; (void)s; (void)m; } }
%token END 0
%%
file: %empty ;
%%
