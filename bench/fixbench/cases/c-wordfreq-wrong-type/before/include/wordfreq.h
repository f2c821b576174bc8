#ifndef WORDFREQ_H
#define WORDFREQ_H

#include <stddef.h>
#include <stdint.h>

#define WF_MAX_WORDS 256
#define WF_WORD_LEN 24

typedef struct {
    char word[WF_WORD_LEN];
    uint32_t count;
} wf_entry;

typedef struct {
    wf_entry entries[WF_MAX_WORDS];
    size_t len;
} wordfreq;

void wf_init(wordfreq *wf);
/* Counts the words (runs of letters, case-folded) of text; words past the table size are dropped. */
void wf_count(wordfreq *wf, const char *text);
/* The count of word, 0 if unseen. */
uint32_t wf_get(const wordfreq *wf, const char *word);
/* The most frequent word (the first seen on ties), or NULL. */
const char *wf_top(const wordfreq *wf);

#endif
