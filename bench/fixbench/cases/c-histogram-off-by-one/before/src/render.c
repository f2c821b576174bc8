#include <stdio.h>

#include "histogram.h"

size_t hist_render(const histogram *h, char *out, size_t size, unsigned width)
{
    unsigned peak = 1;
    for (size_t i = 0; i < h->nbuckets; i++)
        if (h->counts[i] > peak)
            peak = h->counts[i];
    double step = (h->hi - h->lo) / (double)h->nbuckets;
    size_t used = 0;
    for (size_t i = 0; i < h->nbuckets && used < size; i++) {
        unsigned bar = h->counts[i] * width / peak;
        int n = snprintf(out + used, size - used, "[%g, %g) ", h->lo + step * (double)i,
                         h->lo + step * (double)(i + 1));
        if (n < 0)
            break;
        used += (size_t)n;
        for (unsigned b = 0; b < bar && used + 1 < size; b++)
            out[used++] = '#';
        if (used + 1 < size)
            out[used++] = '\n';
        out[used < size ? used : size - 1] = '\0';
    }
    return used;
}
