#ifndef RINGBUF_H
#define RINGBUF_H

#include <stdbool.h>
#include <stddef.h>

#define RB_CAPACITY 8

typedef struct {
    const char *items[RB_CAPACITY];
    size_t head; /* next slot to write */
    size_t len;
} ringbuf;

void rb_init(ringbuf *rb);
/* Appends; when full, the oldest item is overwritten. */
void rb_push(ringbuf *rb, const char *item);
/* The i-th oldest item, or NULL. */
const char *rb_get(const ringbuf *rb, size_t i);
bool rb_full(const ringbuf *rb);

#endif
