#include <stdio.h>
#include <string.h>

#include "histogram.h"

static int failures;

#define CHECK_EQ(actual, expected)                                                       \
    do {                                                                                 \
        long a_ = (long)(actual), e_ = (long)(expected);                                 \
        if (a_ != e_) {                                                                  \
            fprintf(stderr, "%s:%d: %s == %ld, expected %ld\n", __FILE__, __LINE__, #actual, a_, e_); \
            failures++;                                                                  \
        }                                                                                \
    } while (0)

static void test_edges(void)
{
    histogram h;
    CHECK_EQ(hist_init(&h, 0, 10, 5), 0);
    hist_add(&h, 0);
    hist_add(&h, 1.99);
    hist_add(&h, 2);
    hist_add(&h, 10);
    hist_add(&h, 10.01);
    CHECK_EQ(h.counts[0], 2);
    CHECK_EQ(h.counts[1], 1);
    CHECK_EQ(h.counts[4], 1);
    CHECK_EQ(h.outside, 1);
}

static void test_render(void)
{
    histogram h;
    hist_init(&h, 0, 4, 2);
    hist_add(&h, 1);
    hist_add(&h, 3);
    hist_add(&h, 3.5);
    char buf[128];
    hist_render(&h, buf, sizeof buf, 4);
    if (strcmp(buf, "[0, 2) ##\n[2, 4) ####\n") != 0) {
        fprintf(stderr, "render: got \"%s\"\n", buf);
        failures++;
    }
}

int main(void)
{
    test_edges();
    test_render();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    puts("all tests passed");
    return 0;
}
