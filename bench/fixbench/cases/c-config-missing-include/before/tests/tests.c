#include <stdio.h>
#include <string.h>

#include "config.h"

static int failures;

#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                             \
        }                                                                           \
    } while (0)

int main(void)
{
    config cfg;
    CHECK(config_parse(&cfg, "# server\nHost = example.org \n\nport=8080 # default\n") == 0);
    CHECK(cfg.count == 2);
    CHECK(strcmp(config_get(&cfg, "host"), "example.org") == 0);
    CHECK(strcmp(config_get(&cfg, "port"), "8080") == 0);
    CHECK(config_get(&cfg, "missing") == NULL);
    CHECK(config_parse(&cfg, "a = 1\nnot a pair\n") == 2);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    puts("all tests passed");
    return 0;
}
