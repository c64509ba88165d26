/* Fast path of the exact engine: rows of a sinusoidal table by the angle-addition identity.
 *
 *   sin((p0 + j) w) = sin(p0 w) cos(j w) + cos(p0 w) sin(j w)
 *   cos((p0 + j) w) = cos(p0 w) cos(j w) - sin(p0 w) sin(j w)
 *
 * The caller computes sin/cos of p0*w (the anchor), of k*fine*w (coarse steps) and of j*w
 * (fine steps) with the exact kernel (about 1 ulp of float64). Each element is then two
 * rotations away from those, within ERROR (absolute) of the truth. The element is rounded
 * once to the output format; where the truth could lie on the other side of a rounding
 * midpoint (within ERROR of one) its index is reported, and the caller recomputes it.
 *
 * Float64 work, no allocation per element, and the GIL released: two threads fill two blocks.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Two rotations with inputs within 2^-53 (1 ulp below 1) give at most about 9 * 2^-53; the
 * bound used is 16 times that. */
#define ERROR 0x1p-47

enum { F32 = 0, F16 = 1, BF16 = 2 };

static inline double pow2(int e) {
    uint64_t bits = (uint64_t)(e + 1023) << 52;
    double x;
    memcpy(&x, &bits, 8);
    return x;
}

/* Round y to `precision` significant bits (quanta no finer than 2^min_exp), ties to even.
 * Sets *suspect when the truth, within ERROR of y, could round the other way. */
static inline double round_grid(double y, int precision, int min_exp, int *suspect) {
    double a = fabs(y);
    uint64_t bits;
    memcpy(&bits, &a, 8);
    int e = (int)(bits >> 52) - 1023; /* a in [2^e, 2^(e+1)) */
    int qe = e - (precision - 1);
    if (qe < min_exp) qe = min_exp;
    double q = pow2(qe);
    /* a / q < 2^53: adding and removing 2^52 rounds to an integer, ties to even */
    double n = (a * pow2(-qe) + 0x1p52) - 0x1p52;
    double r = n * q;
    double distance = 0.5 * q - fabs(a - r); /* to the midpoint on a's side of r */
    *suspect = distance <= ERROR;
    return copysign(r, y);
}

static inline uint16_t half_bits(double r) {
    /* r is exactly representable in float16 */
    uint16_t sign = signbit(r) ? 0x8000 : 0;
    double a = fabs(r);
    if (a == 0) return sign;
    int e;
    double m = frexp(a, &e); /* a = m 2^e, 0.5 <= m < 1 */
    if (e - 1 < -14) return sign | (uint16_t)(a * 0x1p24); /* subnormal: multiples of 2^-24 */
    return sign | (uint16_t)((e - 1 + 15) << 10) | (uint16_t)((m * 2 - 1) * 1024);
}

static inline void store(char *out, Py_ssize_t index, int kind, double r) {
    if (kind == F32) {
        ((float *)out)[index] = (float)r;
    } else if (kind == BF16) {
        float f = (float)r; /* exact: r is a bfloat16 value */
        uint32_t bits;
        memcpy(&bits, &f, 4);
        ((uint16_t *)out)[index] = (uint16_t)(bits >> 16);
    } else {
        ((uint16_t *)out)[index] = half_bits(r);
    }
}

/* float32 output, the common case, written without branches so that it vectorizes: the
 * hardware conversion rounds to nearest even, and the check needs only the result's
 * exponent (2^(field - 150) is its spacing; half that just below a power of two). */
static inline int undecided_f32(double y, float f) {
    double a = fabs(y), ra = fabs((double)f);
    uint32_t fb;
    memcpy(&fb, &f, 4);
    fb &= 0x7FFFFFFF;
    uint64_t qbits = (uint64_t)((fb >> 23) + 873) << 52;
    double q;
    memcpy(&q, &qbits, 8);
    int below_power_of_two = ((fb & 0x7FFFFF) == 0) & (a < ra);
    double half = q * (0.5 - 0.25 * below_power_of_two);
    return half - fabs(a - ra) <= ERROR;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLONES
#endif

/* One row of float32 results written straight into the table: sin of frequency i at
 * sin_out[i * sin_step], cos at cos_out[i * cos_step] for i < n_cos (every convention lays
 * its columns out this way). Returns whether any element is undecided. */
CLONES static int row_f32(Py_ssize_t n, Py_ssize_t n_cos, const double *restrict ks,
                          const double *restrict kc, const double *restrict fs,
                          const double *restrict fc, float *restrict sin_out,
                          Py_ssize_t sin_step, float *restrict cos_out, Py_ssize_t cos_step) {
    int any = 0;
    for (Py_ssize_t i = 0; i < n_cos; i++) {
        double s = ks[i] * fc[i] + kc[i] * fs[i];
        double c = kc[i] * fc[i] - ks[i] * fs[i];
        float s32 = (float)s, c32 = (float)c;
        any |= undecided_f32(s, s32) | undecided_f32(c, c32);
        sin_out[i * sin_step] = s32;
        cos_out[i * cos_step] = c32;
    }
    for (Py_ssize_t i = n_cos; i < n; i++) { /* odd d in the interleaved layouts: a last sin */
        double s = ks[i] * fc[i] + kc[i] * fs[i];
        float s32 = (float)s;
        any |= undecided_f32(s, s32);
        sin_out[i * sin_step] = s32;
    }
    return any;
}

/* The same for float16 and bfloat16, rounded from float64 directly (through float32 would
 * round twice). */
static int row_narrow(Py_ssize_t n, const double *ks, const double *kc, const double *fs,
                      const double *fc, int precision, int min_exp, double *rs, double *rc) {
    int any = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int us, uc;
        rs[i] = round_grid(ks[i] * fc[i] + kc[i] * fs[i], precision, min_exp, &us);
        rc[i] = round_grid(kc[i] * fc[i] - ks[i] * fs[i], precision, min_exp, &uc);
        any |= us | uc;
    }
    return any;
}

static PyObject *rotate_block(PyObject *self, PyObject *args) {
    Py_buffer out, anchor_s, anchor_c, coarse_s, coarse_c, fine_s, fine_c, sin_col, cos_col,
        zero_col, scratch, suspects;
    int kind, precision, min_exp;
    Py_ssize_t rows, d, n, fine;
    if (!PyArg_ParseTuple(args, "w*iiinnnny*y*y*y*y*y*y*y*y*w*w*", &out, &kind, &precision,
                          &min_exp, &rows, &d, &n, &fine, &anchor_s, &anchor_c, &coarse_s,
                          &coarse_c, &fine_s, &fine_c, &sin_col, &cos_col, &zero_col, &scratch,
                          &suspects))
        return NULL;
    const double *as = anchor_s.buf, *ac = anchor_c.buf, *cs = coarse_s.buf,
                 *cc = coarse_c.buf, *fs = fine_s.buf, *fc = fine_c.buf;
    const int32_t *scol = sin_col.buf, *ccol = cos_col.buf, *zcol = zero_col.buf;
    Py_ssize_t zeros = zero_col.len / 4;
    /* scratch: sin/cos at the current coarse step (2n doubles), then one row's results */
    double *ks = scratch.buf, *kc = ks + n, *row_s = kc + n, *row_c = row_s + n;
    /* the layout is affine: sin of frequency i in column scol[0] + i * sin_step, and so cos */
    Py_ssize_t n_cos = 0;
    while (n_cos < n && ccol[n_cos] >= 0) n_cos++;
    Py_ssize_t sin_step = n > 1 ? scol[1] - scol[0] : 1;
    Py_ssize_t cos_step = n_cos > 1 ? ccol[1] - ccol[0] : 1;
    int64_t *found = suspects.buf;
    Py_ssize_t capacity = suspects.len / 8, count = 0;
    char *dst = out.buf;

    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r0 = 0; r0 < rows; r0 += fine) {
        const double *s_step = cs + (r0 / fine) * n, *c_step = cc + (r0 / fine) * n;
        for (Py_ssize_t i = 0; i < n; i++) {
            ks[i] = as[i] * c_step[i] + ac[i] * s_step[i];
            kc[i] = ac[i] * c_step[i] - as[i] * s_step[i];
        }
        Py_ssize_t stop = r0 + fine < rows ? r0 + fine : rows;
        for (Py_ssize_t r = r0; r < stop; r++) {
            const double *s_fine = fs + (r - r0) * n, *c_fine = fc + (r - r0) * n;
            Py_ssize_t row = r * d;
            int any;
            if (n == 0) {
                any = 0; /* d = 1 in the [sin | cos | 0] layouts: only the zero column */
            } else if (kind == F32) {
                float *o = (float *)dst + row;
                any = row_f32(n, n_cos, ks, kc, s_fine, c_fine, o + scol[0], sin_step,
                              o + (n_cos ? ccol[0] : 0), cos_step);
            } else {
                any = row_narrow(n, ks, kc, s_fine, c_fine, precision, min_exp, row_s, row_c);
                for (Py_ssize_t i = 0; i < n; i++) {
                    store(dst, row + scol[i], kind, row_s[i]);
                    if (ccol[i] >= 0) store(dst, row + ccol[i], kind, row_c[i]);
                }
            }
            for (Py_ssize_t z = 0; z < zeros; z++) store(dst, row + zcol[z], kind, 0.0);
            if (!any) continue;
            for (Py_ssize_t i = 0; i < n; i++) { /* the rare row: list what is undecided */
                double s = ks[i] * c_fine[i] + kc[i] * s_fine[i];
                double c = kc[i] * c_fine[i] - ks[i] * s_fine[i];
                int us, uc;
                if (kind == F32) {
                    us = undecided_f32(s, (float)s);
                    uc = undecided_f32(c, (float)c);
                } else {
                    round_grid(s, precision, min_exp, &us);
                    round_grid(c, precision, min_exp, &uc);
                }
                if (us) {
                    if (count < capacity) found[count] = (r * n + i) * 2;
                    count++;
                }
                if (uc && ccol[i] >= 0) {
                    if (count < capacity) found[count] = (r * n + i) * 2 + 1;
                    count++;
                }
            }
        }
    }
    Py_END_ALLOW_THREADS

    Py_buffer *all[] = {&out, &anchor_s, &anchor_c, &coarse_s, &coarse_c, &fine_s,
                        &fine_c, &sin_col, &cos_col, &zero_col, &scratch, &suspects};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) PyBuffer_Release(all[k]);
    return PyLong_FromSsize_t(count);
}

static PyMethodDef methods[] = {
    {"rotate_block", rotate_block, METH_VARARGS,
     "Fill rows of a table by angle addition; return the number of undecided elements."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rotate", NULL, -1, methods};

PyMODINIT_FUNC PyInit__rotate(void) { return PyModule_Create(&module); }
