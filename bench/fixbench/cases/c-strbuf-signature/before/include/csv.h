#ifndef CSV_H
#define CSV_H

#include "strbuf.h"

/* Appends one CSV field, quoted when it holds a comma, quote or newline. */
int csv_field(strbuf *out, const char *field);
/* Appends a row of n fields and a newline. */
int csv_row(strbuf *out, const char *const *fields, size_t n);

#endif
