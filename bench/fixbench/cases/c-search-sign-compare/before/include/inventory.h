#ifndef INVENTORY_H
#define INVENTORY_H

#include <stddef.h>

#define INV_MAX 64

typedef struct {
    int skus[INV_MAX]; /* ascending */
    int stock[INV_MAX];
    size_t len;
} inventory;

/* Adds quantity to sku's stock, inserting it in order if new; returns -1 when full. */
int inv_add(inventory *inv, int sku, int quantity);
int inv_stock(const inventory *inv, int sku);

#endif
