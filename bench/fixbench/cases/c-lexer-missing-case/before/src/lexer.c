#include "lexer.h"

#include <ctype.h>

void lexer_init(lexer *lx, const char *src)
{
    lx->src = src;
    lx->pos = 0;
}

static token make(lexer *lx, token_kind kind, size_t start)
{
    token t = {kind, lx->src + start, lx->pos - start};
    return t;
}

token lexer_next(lexer *lx)
{
    while (isspace((unsigned char)lx->src[lx->pos]))
        lx->pos++;
    size_t start = lx->pos;
    char c = lx->src[lx->pos];
    if (c == '\0')
        return make(lx, TOK_EOF, start);
    lx->pos++;
    if (isdigit((unsigned char)c)) {
        while (isdigit((unsigned char)lx->src[lx->pos]))
            lx->pos++;
        return make(lx, TOK_NUMBER, start);
    }
    if (isalpha((unsigned char)c) || c == '_') {
        while (isalnum((unsigned char)lx->src[lx->pos]) || lx->src[lx->pos] == '_')
            lx->pos++;
        return make(lx, TOK_IDENT, start);
    }
    switch (c) {
    case '(':
        return make(lx, TOK_LPAREN, start);
    case ')':
        return make(lx, TOK_RPAREN, start);
    case '+':
        return make(lx, TOK_PLUS, start);
    case '*':
        return make(lx, TOK_STAR, start);
    default:
        return make(lx, TOK_ERROR, start);
    }
}
