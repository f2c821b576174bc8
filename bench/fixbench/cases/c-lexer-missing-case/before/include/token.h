#ifndef TOKEN_H
#define TOKEN_H

#include <stddef.h>

typedef enum {
    TOK_EOF,
    TOK_NUMBER,
    TOK_IDENT,
    TOK_LPAREN,
    TOK_RPAREN,
    TOK_PLUS,
    TOK_STAR,
    TOK_ERROR,
} token_kind;

typedef struct {
    token_kind kind;
    const char *start;
    size_t len;
} token;

/* A stable name for diagnostics and tests, e.g. "NUMBER". */
const char *token_name(token_kind kind);

#endif
