#include <stdio.h>
#include <string.h>

#include "csv.h"
#include "strbuf.h"

static int failures;

#define CHECK_STR(actual, expected)                                                    \
    do {                                                                               \
        if (strcmp((actual), (expected)) != 0) {                                       \
            fprintf(stderr, "%s:%d: expected \"%s\", got \"%s\"\n", __FILE__, __LINE__, \
                    (expected), (actual));                                             \
            failures++;                                                                \
        }                                                                              \
    } while (0)

static void test_append_grows(void)
{
    strbuf sb;
    strbuf_init(&sb);
    for (int i = 0; i < 10; i++)
        strbuf_append(&sb, "abcdef");
    CHECK_STR(sb.data + 54, "abcdef");
    strbuf_free(&sb);
}

static void test_csv_row_quotes(void)
{
    strbuf sb;
    strbuf_init(&sb);
    const char *row[] = {"id", "say \"hi\"", "a,b"};
    csv_row(&sb, row, 3);
    CHECK_STR(sb.data, "id,\"say \"\"hi\"\"\",\"a,b\"\n");
    strbuf_free(&sb);
}

int main(void)
{
    test_append_grows();
    test_csv_row_quotes();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    puts("all tests passed");
    return 0;
}
