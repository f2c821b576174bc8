#include "logger.h"

void logger_init(logger *log)
{
    rb_init(&log->recent);
    log->dropped = 0;
}

void logger_write(logger *log, const char *line)
{
    if (rb_full(&log->recent))
        log->dropped++;
    rb_push(&log->recent, line);
}

const char *logger_last(const logger *log)
{
    if (log->recent.len == 0)
        return NULL;
    return rb_get(&log->recent, log->recent.len - 1);
}
