/**
 * pyfloat.h - Python's float rounding and float repr, bit for bit.
 *
 * mteb rounds its scores with Python's round(x, ndigits) (5 digits inside the retrieval
 * metrics, 6 when a result file is written) and json.dump prints every float with repr.
 * Both are correctly rounded decimal conversions in CPython (dtoa.c); these functions
 * reproduce them with glibc's exact printf/strtod, so results files can be byte-identical.
 */
#ifndef MIEB_CORE_PYFLOAT_H
#define MIEB_CORE_PYFLOAT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Python's round(x, ndigits) for a float: the decimal value nearest to the exact binary
 * value of x with ndigits digits after the point (half to even on exact ties), converted
 * back to the nearest double. NaN and +-inf come back unchanged, the sign of zero is kept
 * (round(-0.001, 2) is -0.0). Negative ndigits round to tens, hundreds, ...
 * Where Python raises OverflowError (a finite x whose rounded value overflows, only
 * possible for ndigits < 0), this returns +-inf.
 */
double mieb_py_round(double x, int ndigits);

/**
 * Write json.dumps(x) for a Python float into buf (n bytes, NUL-terminated): repr's
 * shortest round-trip digits, "1.0" style for integral values, exponent form
 * ("1e-05", "1.5e+16") when the decimal exponent is < -4 or >= 16, and "NaN",
 * "Infinity", "-Infinity" for non-finite values. Returns the length written (at most
 * 24 characters; 32 bytes always suffice), or -1 if buf is too small (buf then holds "").
 */
int mieb_py_repr(double x, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
