/*
 * pyfloat_tool.c - drive mieb_py_round / mieb_py_repr from tests/py/test_pyfloat.py.
 *
 * Reads lines "<16 hex digits: the double's bits> <ndigits>" from stdin and prints, per
 * line, "<mieb_py_repr(x)> <16 hex digits: bits of mieb_py_round(x, ndigits)>". Bits are
 * used both ways so that no decimal conversion stands between the test and the result.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/pyfloat.h"

int main(void)
{
    char line[128];
    while (fgets(line, sizeof line, stdin)) {
        uint64_t bits;
        int nd;
        if (sscanf(line, "%" SCNx64 " %d", &bits, &nd) != 2) {
            fprintf(stderr, "pyfloat_tool: bad line: %s", line);
            return 2;
        }
        double x, r;
        memcpy(&x, &bits, sizeof x);
        char rep[32];
        if (mieb_py_repr(x, rep, sizeof rep) < 0) {
            fprintf(stderr, "pyfloat_tool: repr overflow\n");
            return 2;
        }
        r = mieb_py_round(x, nd);
        uint64_t rb;
        memcpy(&rb, &r, sizeof rb);
        printf("%s %016" PRIx64 "\n", rep, rb);
    }
    return 0;
}
