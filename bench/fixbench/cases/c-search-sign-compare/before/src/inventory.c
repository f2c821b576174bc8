#include "inventory.h"

#include <string.h>

#include "search.h"

int inv_add(inventory *inv, int sku, int quantity)
{
    size_t at;
    if (search_sorted(inv->skus, inv->len, sku, &at)) {
        inv->stock[at] += quantity;
        return 0;
    }
    if (inv->len == INV_MAX)
        return -1;
    memmove(&inv->skus[at + 1], &inv->skus[at], (inv->len - at) * sizeof inv->skus[0]);
    memmove(&inv->stock[at + 1], &inv->stock[at], (inv->len - at) * sizeof inv->stock[0]);
    inv->skus[at] = sku;
    inv->stock[at] = quantity;
    inv->len++;
    return 0;
}

int inv_stock(const inventory *inv, int sku)
{
    size_t at;
    return search_sorted(inv->skus, inv->len, sku, &at) ? inv->stock[at] : 0;
}
