#include <stdio.h>
#include <string.h>

#include "lexer.h"

static int failures;

static void expect_kinds(const char *src, const char *expected)
{
    char got[256] = "";
    lexer lx;
    lexer_init(&lx, src);
    for (;;) {
        token t = lexer_next(&lx);
        if (got[0])
            strcat(got, " ");
        strcat(got, token_name(t.kind));
        if (t.kind == TOK_EOF)
            break;
    }
    if (strcmp(got, expected) != 0) {
        fprintf(stderr, "lexing \"%s\": expected %s, got %s\n", src, expected, got);
        failures++;
    }
}

int main(void)
{
    expect_kinds("1 + x_2 * (3)", "NUMBER PLUS IDENT STAR LPAREN NUMBER RPAREN EOF");
    expect_kinds("  ", "EOF");
    expect_kinds("a $ b", "IDENT ERROR IDENT EOF");
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    puts("all tests passed");
    return 0;
}
