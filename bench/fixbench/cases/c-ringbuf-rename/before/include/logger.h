#ifndef LOGGER_H
#define LOGGER_H

#include "ringbuf.h"

typedef struct {
    ringbuf recent;
    unsigned dropped;
} logger;

void logger_init(logger *log);
void logger_write(logger *log, const char *line);
/* The most recent line, or NULL. */
const char *logger_last(const logger *log);

#endif
