#ifndef SEARCH_H
#define SEARCH_H

#include <stdbool.h>
#include <stddef.h>

/* Binary search in an ascending array; sets *index to the match or the insertion point. */
bool search_sorted(const int *xs, size_t n, int key, size_t *index);

#endif
