/**
 * set_aside.h - keep a file that cannot be used out of the way instead of deleting it.
 *
 * A result or partial that a resumed run finds broken (empty, cut short, another task's)
 * is scored again; the broken file may still be worth a look, so it is renamed beside
 * itself, never overwritten and never removed.
 */
#ifndef MIEB_CORE_SET_ASIDE_H
#define MIEB_CORE_SET_ASIDE_H

#include <stddef.h>

#include "status.h"

/**
 * Rename path to <path>.bad-<UTC time, YYYYmmddTHHMMSSZ> (then -2, -3, ... when that name is
 * taken); the new name goes to aside (n bytes). MIEB_ERR_IO, naming both, when it fails.
 */
mieb_status mieb_set_aside(const char *path, char *aside, size_t n);

#endif
