#include "histogram.h"

#include <string.h>

int hist_init(histogram *h, double lo, double hi, size_t nbuckets)
{
    if (!(lo < hi) || nbuckets == 0 || nbuckets > HIST_MAX_BUCKETS)
        return -1;
    memset(h, 0, sizeof *h);
    h->lo = lo;
    h->hi = hi;
    h->nbuckets = nbuckets;
    return 0;
}

static size_t bucket_of(const histogram *h, double value)
{
    size_t i = (size_t)((value - h->lo) / (h->hi - h->lo) * (double)h->nbuckets);
    return i < h->nbuckets ? i : h->nbuckets - 1;
}

void hist_add(histogram *h, double value)
{
    if (value < h->lo || value > h->hi) {
        h->outside++;
        return;
    }
    h->counts[bucket_of(h, value)]++;
}
