/* canon_workspace.c - the canonical kernels' per-thread workspace (see canon_kernels.h). */
#include "canon_kernels.h"

#include <pthread.h>
#include <stdlib.h>

struct workspace {
    void *p;
    size_t bytes;
};
static pthread_key_t g_ws_key;
static pthread_once_t g_ws_once = PTHREAD_ONCE_INIT;
static int g_ws_ok;

static void ws_free(void *v)
{
    struct workspace *w = v;
    free(w->p);
    free(w);
}

static void ws_init(void) { g_ws_ok = pthread_key_create(&g_ws_key, ws_free) == 0; }

void *mieb_canon_workspace(size_t bytes)
{
    pthread_once(&g_ws_once, ws_init);
    if (!g_ws_ok)
        return NULL;
    struct workspace *w = pthread_getspecific(g_ws_key);
    if (!w) {
        if (!(w = calloc(1, sizeof *w)) || pthread_setspecific(g_ws_key, w) != 0) {
            free(w);
            return NULL;
        }
    }
    if (w->bytes < bytes) {
        size_t want = (bytes + 63) / 64 * 64;
        void *p = aligned_alloc(64, want);
        if (!p)
            return NULL;
        free(w->p);
        w->p = p;
        w->bytes = want;
    }
    return w->p;
}
