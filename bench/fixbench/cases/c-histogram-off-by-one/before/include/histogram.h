#ifndef HISTOGRAM_H
#define HISTOGRAM_H

#include <stddef.h>

#define HIST_MAX_BUCKETS 16

typedef struct {
    double lo, hi; /* values in [lo, hi] are counted; hi lands in the last bucket */
    size_t nbuckets;
    unsigned counts[HIST_MAX_BUCKETS];
    unsigned outside;
} histogram;

int hist_init(histogram *h, double lo, double hi, size_t nbuckets);
void hist_add(histogram *h, double value);
/* One line per bucket: "[lo, hi) ####" scaled to width; returns bytes written. */
size_t hist_render(const histogram *h, char *out, size_t size, unsigned width);

#endif
