#include "config.h"

#include <stdio.h>

#include "strutil.h"

static int add(config *cfg, char *key, char *value)
{
    if (cfg->count == CONFIG_MAX_KEYS)
        return -1;
    for (char *p = key; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    snprintf(cfg->keys[cfg->count], sizeof cfg->keys[0], "%s", key);
    snprintf(cfg->values[cfg->count], sizeof cfg->values[0], "%s", value);
    cfg->count++;
    return 0;
}

int config_parse(config *cfg, const char *text)
{
    char line[256];
    int number = 0;
    cfg->count = 0;
    while (*text) {
        size_t n = strcspn(text, "\n");
        number++;
        snprintf(line, sizeof line, "%.*s", (int)n, text);
        text += n + (text[n] == '\n');
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *body = str_trim(line);
        if (*body == '\0')
            continue;
        char *eq = strchr(body, '=');
        if (eq == NULL)
            return number;
        *eq = '\0';
        if (add(cfg, str_trim(body), str_trim(eq + 1)) != 0)
            return number;
    }
    return 0;
}

const char *config_get(const config *cfg, const char *key)
{
    for (int i = 0; i < cfg->count; i++)
        if (strcmp(cfg->keys[i], key) == 0)
            return cfg->values[i];
    return NULL;
}
