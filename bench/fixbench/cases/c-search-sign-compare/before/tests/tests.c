#include <stdio.h>

#include "inventory.h"
#include "search.h"

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
    int xs[] = {2, 4, 4, 9};
    size_t at;
    CHECK(search_sorted(xs, 4, 4, &at) && at == 1);
    CHECK(!search_sorted(xs, 4, 5, &at) && at == 3);
    CHECK(!search_sorted(xs, 0, 5, &at) && at == 0);

    inventory inv = {.len = 0};
    inv_add(&inv, 30, 1);
    inv_add(&inv, 10, 5);
    inv_add(&inv, 20, 2);
    inv_add(&inv, 10, 1);
    CHECK(inv.len == 3 && inv.skus[0] == 10 && inv.skus[2] == 30);
    CHECK(inv_stock(&inv, 10) == 6 && inv_stock(&inv, 99) == 0);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    puts("all tests passed");
    return 0;
}
