#ifndef CONFIG_H
#define CONFIG_H

#define CONFIG_MAX_KEYS 32

typedef struct {
    char keys[CONFIG_MAX_KEYS][32];
    char values[CONFIG_MAX_KEYS][128];
    int count;
} config;

/* Parses "key = value" lines; '#' starts a comment; returns the failing line number or 0. */
int config_parse(config *cfg, const char *text);
const char *config_get(const config *cfg, const char *key);

#endif
