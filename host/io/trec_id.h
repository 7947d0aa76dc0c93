/**
 * trec_id.h - query and document ids in whitespace-separated files (run.trec, qrels.trec,
 * per_query.tsv).
 *
 * An id is any UTF-8 string (FORMAT.md), but TREC files split fields on white space. So an
 * id is written as is except for the bytes that would break that: ASCII space, the C0
 * control characters (tab, newline, ...), DEL and the backslash itself, each written as
 * \xHH (two lower-case hex digits). Every other byte, multi-byte UTF-8 and quotes
 * included, is written unchanged, so ordinary ids read back byte for byte and an escaped
 * one reads back with one unescaping pass (docs/BAD_INPUT.md, tests/py/test_limits.py).
 */
#ifndef MIEB_IO_TREC_ID_H
#define MIEB_IO_TREC_ID_H

#include <stdio.h>

/** Write id to f, escaped as described above. */
void mieb_trec_id_put(FILE *f, const char *id);

#endif
