#include "csv.h"

#include <string.h>

int csv_field(strbuf *out, const char *field)
{
    if (strpbrk(field, ",\"\n") == NULL)
        return strbuf_append(out, field);
    if (strbuf_putc(out, '"') != 0)
        return -1;
    for (const char *p = field; *p; p++) {
        if (*p == '"' && strbuf_putc(out, '"') != 0)
            return -1;
        if (strbuf_putc(out, *p) != 0)
            return -1;
    }
    return strbuf_putc(out, '"');
}

int csv_row(strbuf *out, const char *const *fields, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && strbuf_putc(out, ',') != 0)
            return -1;
        if (csv_field(out, fields[i]) != 0)
            return -1;
    }
    return strbuf_putc(out, '\n');
}
