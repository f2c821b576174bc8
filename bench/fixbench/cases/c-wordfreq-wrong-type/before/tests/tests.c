#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wordfreq.h"

static int failures;

#define CHECK_EQ(actual, expected)                                                       \
    do {                                                                                 \
        unsigned long a_ = (unsigned long)(actual), e_ = (unsigned long)(expected);      \
        if (a_ != e_) {                                                                  \
            fprintf(stderr, "%s:%d: %s == %lu, expected %lu\n", __FILE__, __LINE__, #actual, a_, e_); \
            failures++;                                                                  \
        }                                                                                \
    } while (0)

static void test_case_folding(void)
{
    wordfreq wf;
    wf_init(&wf);
    wf_count(&wf, "The cat and the hat. THE END");
    CHECK_EQ(wf_get(&wf, "the"), 3);
    CHECK_EQ(wf_get(&wf, "dog"), 0);
    CHECK_EQ(strcmp(wf_top(&wf), "the"), 0);
}

static void test_large_counts(void)
{
    static wordfreq wf;
    wf_init(&wf);
    char *text = malloc(300 * 4 + 1);
    text[0] = '\0';
    for (int i = 0; i < 300; i++)
        strcat(text, "la ");
    wf_count(&wf, text);
    wf_count(&wf, "fa fa");
    free(text);
    CHECK_EQ(wf_get(&wf, "la"), 300);
    CHECK_EQ(strcmp(wf_top(&wf), "la"), 0);
}

int main(void)
{
    test_case_folding();
    test_large_counts();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    puts("all tests passed");
    return 0;
}
