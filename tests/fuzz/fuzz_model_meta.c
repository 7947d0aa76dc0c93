/* fuzz_model_meta.c - <embeddings>/model_meta.json through mieb_model_meta_load. */
#include "fuzz_common.h"

#include "config/model_meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/emb", fuzz_tmpdir());
    fuzz_mkdirs(dir);
    snprintf(path, sizeof path, "%s/model_meta.json", dir);
    fuzz_write(path, data, size);
    struct mieb_model_meta *m = malloc(sizeof *m);
    if (mieb_model_meta_load(dir, m) == MIEB_OK) {
        /* what the program does with an accepted file: names and the similarity */
        if (!m->name[0] || strlen(m->name) >= sizeof m->name || strlen(m->revision) >= sizeof m->revision)
            abort();
        /* the bytes kept for the copy are the bytes read */
        if (m->text_len != size || memcmp(m->text, data, size) != 0)
            abort();
    }
    mieb_model_meta_free(m);
    free(m);
    return 0;
}
