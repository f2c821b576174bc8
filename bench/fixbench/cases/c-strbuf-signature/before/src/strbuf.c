#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

void strbuf_init(strbuf *sb)
{
    sb->data = NULL;
    sb->len = 0;
    sb->cap = 0;
}

void strbuf_free(strbuf *sb)
{
    free(sb->data);
    strbuf_init(sb);
}

static int grow(strbuf *sb, size_t extra)
{
    if (sb->len + extra + 1 <= sb->cap)
        return 0;
    size_t cap = sb->cap ? sb->cap : 16;
    while (cap < sb->len + extra + 1)
        cap *= 2;
    char *data = realloc(sb->data, cap);
    if (data == NULL)
        return -1;
    sb->data = data;
    sb->cap = cap;
    return 0;
}

int strbuf_append(strbuf *sb, const char *s)
{
    size_t n = strlen(s);
    if (grow(sb, n) != 0)
        return -1;
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
    return 0;
}

int strbuf_putc(strbuf *sb, char c)
{
    if (grow(sb, 1) != 0)
        return -1;
    sb->data[sb->len++] = c;
    sb->data[sb->len] = '\0';
    return 0;
}
