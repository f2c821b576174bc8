#include "wordfreq.h"

#include <ctype.h>
#include <string.h>

void wf_init(wordfreq *wf)
{
    wf->len = 0;
}

static wf_entry *find(wordfreq *wf, const char *word)
{
    for (size_t i = 0; i < wf->len; i++)
        if (strcmp(wf->entries[i].word, word) == 0)
            return &wf->entries[i];
    if (wf->len == WF_MAX_WORDS)
        return NULL;
    wf_entry *e = &wf->entries[wf->len++];
    strcpy(e->word, word);
    e->count = 0;
    return e;
}

void wf_count(wordfreq *wf, const char *text)
{
    char word[WF_WORD_LEN];
    size_t n = 0;
    for (const char *p = text;; p++) {
        if (isalpha((unsigned char)*p)) {
            if (n + 1 < sizeof word)
                word[n++] = (char)tolower((unsigned char)*p);
            continue;
        }
        if (n > 0) {
            word[n] = '\0';
            wf_entry *e = find(wf, word);
            if (e)
                e->count++;
            n = 0;
        }
        if (*p == '\0')
            break;
    }
}

uint32_t wf_get(const wordfreq *wf, const char *word)
{
    for (size_t i = 0; i < wf->len; i++)
        if (strcmp(wf->entries[i].word, word) == 0)
            return wf->entries[i].count;
    return 0;
}

const char *wf_top(const wordfreq *wf)
{
    const wf_entry *best = NULL;
    for (size_t i = 0; i < wf->len; i++)
        if (best == NULL || wf->entries[i].count > best->count)
            best = &wf->entries[i];
    return best ? best->word : NULL;
}
