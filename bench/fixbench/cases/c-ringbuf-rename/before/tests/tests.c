#include <stdio.h>
#include <string.h>

#include "logger.h"
#include "ringbuf.h"

static int failures;

#define CHECK(cond)                                                         \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                     \
        }                                                                   \
    } while (0)

static void test_wraps_around(void)
{
    ringbuf rb;
    rb_init(&rb);
    char names[10][4];
    for (int i = 0; i < 10; i++) {
        snprintf(names[i], sizeof names[i], "n%d", i);
        rb_push(&rb, names[i]);
    }
    CHECK(rb_full(&rb));
    CHECK(strcmp(rb_get(&rb, 0), "n2") == 0);
    CHECK(strcmp(rb_get(&rb, 7), "n9") == 0);
    CHECK(rb_get(&rb, 8) == NULL);
}

static void test_logger_counts_dropped(void)
{
    logger log;
    logger_init(&log);
    CHECK(logger_last(&log) == NULL);
    for (int i = 0; i < 11; i++)
        logger_write(&log, "line");
    logger_write(&log, "last");
    CHECK(log.dropped == 4);
    CHECK(strcmp(logger_last(&log), "last") == 0);
}

int main(void)
{
    test_wraps_around();
    test_logger_counts_dropped();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    puts("all tests passed");
    return 0;
}
