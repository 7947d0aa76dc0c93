/*
 * json_strict_tool.c - drive mieb_json_read_strict from tests/py/test_json_inputs.py.
 *
 * For each file named on the command line prints one line: "ok <the tree as Python's
 * json.dumps would write it, on one line>" or "refused <the message>". The test compares
 * both answers with what Python's json module makes of the same bytes.
 */
#include <stdio.h>
#include <string.h>

#include "json/json_alloc.h"
#include "json/json_py.h"
#include "json/json_strict.h"

int main(int argc, char **argv)
{
    mieb_json_alloc_hooks();
    for (int i = 1; i < argc; i++) {
        struct mieb_json_file f;
        struct mieb_buf b = {0};
        if (mieb_json_read_strict(argv[i], 16u << 20, MIEB_ERR_CONFIG, &f) != MIEB_OK) {
            printf("refused %s\n", mieb_last_error());
            continue;
        }
        if (mieb_json_py_dump(f.root, &b) != MIEB_OK) {
            fprintf(stderr, "json_strict_tool: %s\n", mieb_last_error());
            return 2;
        }
        for (size_t k = 0; k < b.len; k++) /* one line: the indent's newlines only (strings escape theirs) */
            if (b.data[k] == '\n')
                b.data[k] = ' ';
        printf("ok %s\n", b.data);
        mieb_buf_free(&b);
        mieb_json_file_free(&f);
    }
    return 0;
}
