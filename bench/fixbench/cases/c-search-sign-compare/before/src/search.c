#include "search.h"

bool search_sorted(const int *xs, size_t n, int key, size_t *index)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (xs[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    *index = lo;
    return lo < n && xs[lo] == key;
}
