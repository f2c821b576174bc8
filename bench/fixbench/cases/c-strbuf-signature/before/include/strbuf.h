#ifndef STRBUF_H
#define STRBUF_H

#include <stddef.h>

typedef struct {
    char *data;
    size_t len;
    size_t cap;
} strbuf;

void strbuf_init(strbuf *sb);
void strbuf_free(strbuf *sb);
/* Appends a NUL-terminated string; returns 0, or -1 when out of memory. */
int strbuf_append(strbuf *sb, const char *s);
int strbuf_putc(strbuf *sb, char c);

#endif
