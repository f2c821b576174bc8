#ifndef STRUTIL_H
#define STRUTIL_H

#include <ctype.h>
#include <stddef.h>
#include <string.h>

/* Strips leading and trailing whitespace in place; returns s + leading. */
char *str_trim(char *s);
int str_startswith(const char *s, const char *prefix);

#endif
