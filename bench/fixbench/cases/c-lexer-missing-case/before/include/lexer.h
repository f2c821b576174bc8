#ifndef LEXER_H
#define LEXER_H

#include "token.h"

typedef struct {
    const char *src;
    size_t pos;
} lexer;

void lexer_init(lexer *lx, const char *src);
token lexer_next(lexer *lx);

#endif
