#include "token.h"

const char *token_name(token_kind kind)
{
    switch (kind) {
    case TOK_EOF:
        return "EOF";
    case TOK_NUMBER:
        return "NUMBER";
    case TOK_IDENT:
        return "IDENT";
    case TOK_LPAREN:
        return "LPAREN";
    case TOK_RPAREN:
        return "RPAREN";
    case TOK_PLUS:
        return "PLUS";
    case TOK_STAR:
        return "STAR";
    case TOK_ERROR:
        return "ERROR";
    }
    return "?";
}
