#include "ringbuf.h"

void rb_init(ringbuf *rb)
{
    rb->head = 0;
    rb->len = 0;
}

void rb_push(ringbuf *rb, const char *item)
{
    rb->items[rb->head] = item;
    rb->head = (rb->head + 1) % RB_CAPACITY;
    if (rb->len < RB_CAPACITY)
        rb->len++;
}

const char *rb_get(const ringbuf *rb, size_t i)
{
    if (i >= rb->len)
        return NULL;
    size_t oldest = (rb->head + RB_CAPACITY - rb->len) % RB_CAPACITY;
    return rb->items[(oldest + i) % RB_CAPACITY];
}

bool rb_full(const ringbuf *rb)
{
    return rb->len == RB_CAPACITY;
}
