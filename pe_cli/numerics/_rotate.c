/* Fast path of the exact engine: rows of a sinusoidal table by the angle-addition identity.
 *
 *   sin((p0 + j) w) = sin(p0 w) cos(j w) + cos(p0 w) sin(j w)
 *   cos((p0 + j) w) = cos(p0 w) cos(j w) - sin(p0 w) sin(j w)
 *
 * The caller computes sin/cos of p0*w (the anchor), of k*fine*w (coarse steps) and of j*w
 * (fine steps) with the exact kernel, as double-doubles (hi + lo, within about 2^-88). Each
 * element is two rotations away from those. In float64, from the hi parts alone, it is within
 * ERROR (absolute) of the truth; it is rounded once to the output format, and kept when every
 * value within ERROR of it rounds the same way. The rare element that fails this test is
 * rotated again in double-double, within DD_ERROR, and decided the same way; what is still
 * undecided (an exact zero, say) is reported by index and recomputed by the caller.
 *
 * Float64 work, no allocation, and the GIL released: threads fill separate blocks at once.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Two rotations with inputs within 2^-53 (1 ulp below 1) give at most about 9 * 2^-53; the
 * bound used is 16 times that. */
#define ERROR 0x1p-47
/* The float32 test rounds y - CHECK and y + CHECK: CHECK covers ERROR and the rounding of the
 * two sums themselves (at most 2^-53 below 2). */
#define CHECK (ERROR + 0x1p-52)
/* Two double-double rotations of inputs within about 2^-88: a few times 2^-88; the bound used
 * is 2^-80, doubled to cover the test's own roundings. */
#define DD_ERROR 0x1p-79

enum { F32 = 0, F16 = 1, BF16 = 2 };

static inline double pow2(int e) {
    uint64_t bits = (uint64_t)(e + 1023) << 52;
    double x;
    memcpy(&x, &bits, 8);
    return x;
}

/* The grid of a format: `precision` significant bits, quanta no finer than 2^min_exp. The
 * quantum of the grid at a >= 0 (the spacing of the binade a lies in). */
static inline int quantum_exponent(double a, int precision, int min_exp) {
    uint64_t bits;
    memcpy(&bits, &a, 8);
    int qe = (int)(bits >> 52) - 1023 - (precision - 1); /* a in [2^e, 2^(e+1)) */
    return qe < min_exp ? min_exp : qe;
}

/* y rounded to the grid, ties to even. Sets *undecided when a value within ERROR of y could
 * round the other way. */
static inline double round_grid(double y, int precision, int min_exp, int *undecided) {
    double a = fabs(y);
    int qe = quantum_exponent(a, precision, min_exp);
    double q = pow2(qe);
    /* a / q < 2^53: adding and removing 2^52 rounds to an integer, ties to even */
    double n = (a * pow2(-qe) + 0x1p52) - 0x1p52;
    double r = n * q;
    *undecided = 0.5 * q - fabs(a - r) <= ERROR; /* distance to the midpoint on a's side */
    return copysign(r, y);
}

/* hi + lo (|lo| <= half an ulp of hi, within DD_ERROR / 2 of the truth) rounded to the grid:
 * returns 1 and sets *out when the truth is farther than that from the midpoints around the
 * grid value r nearest hi (and so on a known side of each), 0 otherwise. */
static int decide_dd(double hi, double lo, int precision, int min_exp, double *out) {
    double sign = hi < 0 ? -1.0 : 1.0, h = fabs(hi), l = sign * lo; /* |truth| ~ h + l */
    int unused;
    double r = fabs(round_grid(h, precision, min_exp, &unused));
    double up = pow2(quantum_exponent(r, precision, min_exp)); /* spacing above r */
    /* and below it: finer when r is a power of two (the binade below is another) */
    double down = r > 0 ? pow2(quantum_exponent(nextafter(r, 0.0), precision, min_exp)) : up;
    double above = (h - (r + 0.5 * up)) + l;                   /* truth - upper midpoint */
    double below = r > 0 ? (h - (r - 0.5 * down)) + l : 1.0;   /* truth - lower midpoint */
    if (fabs(above) <= DD_ERROR || fabs(below) <= DD_ERROR) return 0;
    /* hi + lo is within an ulp of float64 of h: at most one midpoint lies between them */
    *out = sign * (above > 0 ? r + up : below < 0 ? r - down : r);
    return 1;
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

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLONES
#endif

/* Rounding to nearest is monotonic: if y - CHECK and y + CHECK round to the same float32,
 * so does everything between them, the truth included. */
#define UNDECIDED_F32(y) ((float)((y) - CHECK) != (float)((y) + CHECK))

/* One row of float32 results written straight into the table: sin of frequency i at
 * sin_out[i * sin_step] (i < n), cos at cos_out[i * cos_step] (i < n_cos). Every layout is
 * two such progressions; the two common ones have loops of their own, which vectorize.
 * Returns whether any element is undecided. */
CLONES static int row_f32(Py_ssize_t n, Py_ssize_t n_cos, const double *restrict ks,
                          const double *restrict kc, const double *restrict fs,
                          const double *restrict fc, float *restrict sin_out,
                          Py_ssize_t sin_step, float *restrict cos_out, Py_ssize_t cos_step) {
    int any = 0;
#define ROTATE(i)                                  \
    double s = ks[i] * fc[i] + kc[i] * fs[i];      \
    double c = kc[i] * fc[i] - ks[i] * fs[i];      \
    any |= UNDECIDED_F32(s) | UNDECIDED_F32(c)
    if (sin_step == 2 && cos_step == 2 && cos_out == sin_out + 1) { /* sin, cos, sin, ... */
        for (Py_ssize_t i = 0; i < n_cos; i++) {
            ROTATE(i);
            sin_out[2 * i] = (float)s;
            sin_out[2 * i + 1] = (float)c;
        }
    } else if (sin_step == 1 && cos_step == 1) { /* sin block, cos block */
        for (Py_ssize_t i = 0; i < n_cos; i++) {
            ROTATE(i);
            sin_out[i] = (float)s;
            cos_out[i] = (float)c;
        }
    } else {
        for (Py_ssize_t i = 0; i < n_cos; i++) {
            ROTATE(i);
            sin_out[i * sin_step] = (float)s;
            cos_out[i * cos_step] = (float)c;
        }
    }
#undef ROTATE
    for (Py_ssize_t i = n_cos; i < n; i++) { /* odd d in the interleaved layouts: a last sin */
        double s = ks[i] * fc[i] + kc[i] * fs[i];
        any |= UNDECIDED_F32(s);
        sin_out[i * sin_step] = (float)s;
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

/* Double-double arithmetic (fma gives the exact product's error). */
static inline void two_sum(double a, double b, double *s, double *e) {
    *s = a + b;
    double bb = *s - a;
    *e = (a - (*s - bb)) + (b - bb);
}

static inline void dd_mul(double ah, double al, double bh, double bl, double *h, double *l) {
    double p = ah * bh;
    double e = fma(ah, bh, -p) + (ah * bl + al * bh);
    *h = p + e;
    *l = e - (*h - p);
}

static inline void dd_add(double ah, double al, double bh, double bl, double *h, double *l) {
    double s, e;
    two_sum(ah, bh, &s, &e);
    e += al + bl;
    *h = s + e;
    *l = e - (*h - s);
}

/* (s, c) <- rotation of (as, ac) by (bs, bc), all double-doubles: {hi, lo} pairs. */
static void dd_rotate(const double as[2], const double ac[2], const double bs[2],
                      const double bc[2], double s[2], double c[2]) {
    double p[2], q[2];
    dd_mul(as[0], as[1], bc[0], bc[1], &p[0], &p[1]);
    dd_mul(ac[0], ac[1], bs[0], bs[1], &q[0], &q[1]);
    dd_add(p[0], p[1], q[0], q[1], &s[0], &s[1]);
    dd_mul(ac[0], ac[1], bc[0], bc[1], &p[0], &p[1]);
    dd_mul(as[0], as[1], bs[0], bs[1], &q[0], &q[1]);
    dd_add(p[0], p[1], -q[0], -q[1], &c[0], &c[1]);
}

/* A table of sin and cos as double-doubles: four planes of rows x n (sin hi, cos hi, sin lo,
 * cos lo). */
typedef struct {
    const double *sh, *ch, *sl, *cl;
} Planes;

static Planes planes(const double *base, Py_ssize_t rows, Py_ssize_t n) {
    Planes t = {base, base + rows * n, base + 2 * rows * n, base + 3 * rows * n};
    return t;
}

/* Whether every column index in an int32 buffer lies in [low, d). */
static int columns_fit(const Py_buffer *columns, int low, Py_ssize_t d) {
    const int32_t *c = columns->buf;
    for (Py_ssize_t i = 0; i < columns->len / 4; i++)
        if (c[i] < low || c[i] >= d) return 0;
    return 1;
}

static PyObject *rotate_block(PyObject *self, PyObject *args) {
    Py_buffer out, anchor_buf, coarse_buf, fine_buf, sin_col, cos_col, zero_col, scratch, suspects;
    int kind, precision, min_exp;
    Py_ssize_t rows, d, n, fine, coarse_rows, coarse_start;
    if (!PyArg_ParseTuple(args, "w*iiinnnnnny*y*y*y*y*y*w*w*", &out, &kind, &precision, &min_exp,
                          &rows, &d, &n, &fine, &coarse_rows, &coarse_start, &anchor_buf,
                          &coarse_buf, &fine_buf, &sin_col, &cos_col, &zero_col, &scratch,
                          &suspects))
        return NULL;
    Py_buffer *all[] = {&out, &anchor_buf, &coarse_buf, &fine_buf, &sin_col,
                        &cos_col, &zero_col, &scratch, &suspects};
    size_t item = kind == F32 ? 4 : 2;
    if (n < 0 || d < 1 || rows < 0 || fine < 1 || coarse_start < 0 ||
        (Py_ssize_t)(out.len / item) < rows * d || anchor_buf.len < 32 * n ||
        coarse_buf.len < 32 * coarse_rows * n || fine_buf.len < 32 * fine * n ||
        coarse_start + (rows + fine - 1) / fine > coarse_rows || scratch.len < 32 * n ||
        sin_col.len < 4 * n || cos_col.len < 4 * n || !columns_fit(&sin_col, 0, d) ||
        !columns_fit(&cos_col, -1, d) || !columns_fit(&zero_col, 0, d)) {
        for (size_t b = 0; b < sizeof all / sizeof *all; b++) PyBuffer_Release(all[b]);
        PyErr_SetString(PyExc_ValueError, "rotate_block: buffers or columns do not fit the geometry");
        return NULL;
    }
    Planes anchor = planes(anchor_buf.buf, 1, n), coarse = planes(coarse_buf.buf, coarse_rows, n),
           fine_t = planes(fine_buf.buf, fine, n);
    const int32_t *scol = sin_col.buf, *ccol = cos_col.buf, *zcol = zero_col.buf;
    Py_ssize_t zeros = zero_col.len / 4;
    /* scratch: the coarse step's sin and cos (2n doubles), then one row's narrow results */
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
        Py_ssize_t k = coarse_start + r0 / fine; /* this coarse step */
        const double *s_step = coarse.sh + k * n, *c_step = coarse.ch + k * n;
        for (Py_ssize_t i = 0; i < n; i++) {
            ks[i] = anchor.sh[i] * c_step[i] + anchor.ch[i] * s_step[i];
            kc[i] = anchor.ch[i] * c_step[i] - anchor.sh[i] * s_step[i];
        }
        Py_ssize_t stop = r0 + fine < rows ? r0 + fine : rows;
        for (Py_ssize_t r = r0; r < stop; r++) {
            Py_ssize_t j = r - r0, row = r * d;
            const double *s_fine = fine_t.sh + j * n, *c_fine = fine_t.ch + j * n;
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
            /* The rare row: every element decided again and stored, the undecided ones after a
             * double-double rotation; what that cannot decide is listed. */
            for (Py_ssize_t i = 0; i < n; i++) {
                double value[2] = {ks[i] * c_fine[i] + kc[i] * s_fine[i],
                                   kc[i] * c_fine[i] - ks[i] * s_fine[i]};
                double dd[2][2];
                int refined = 0;
                for (int plane = 0; plane < 2; plane++) {
                    Py_ssize_t column = plane == 0 ? scol[i] : ccol[i];
                    if (column < 0) continue;
                    int undecided;
                    double rounded = round_grid(value[plane], precision, min_exp, &undecided);
                    if (undecided) {
                        if (!refined) {
                            double kd_s[2], kd_c[2];
                            const double as[2] = {anchor.sh[i], anchor.sl[i]},
                                         ac[2] = {anchor.ch[i], anchor.cl[i]},
                                         cs[2] = {coarse.sh[k * n + i], coarse.sl[k * n + i]},
                                         cc[2] = {coarse.ch[k * n + i], coarse.cl[k * n + i]},
                                         fs[2] = {fine_t.sh[j * n + i], fine_t.sl[j * n + i]},
                                         fc[2] = {fine_t.ch[j * n + i], fine_t.cl[j * n + i]};
                            dd_rotate(as, ac, cs, cc, kd_s, kd_c);
                            dd_rotate(kd_s, kd_c, fs, fc, dd[0], dd[1]);
                            refined = 1;
                        }
                        if (!decide_dd(dd[plane][0], dd[plane][1], precision, min_exp, &rounded)) {
                            if (count < capacity) found[count] = (r * n + i) * 2 + plane;
                            count++;
                            continue;
                        }
                    }
                    store(dst, row + column, kind, rounded);
                }
            }
        }
    }
    Py_END_ALLOW_THREADS

    for (size_t b = 0; b < sizeof all / sizeof *all; b++) PyBuffer_Release(all[b]);
    return PyLong_FromSsize_t(count);
}

/* Reserve a new file's blocks in one call, where the system has fallocate: a writer then
 * skips the file system's per-page block reservation. Returns whether it was done. */
static PyObject *preallocate(PyObject *self, PyObject *args) {
    int fd, done = 0;
    long long size;
    if (!PyArg_ParseTuple(args, "iL", &fd, &size)) return NULL;
#ifdef __linux__
    Py_BEGIN_ALLOW_THREADS
    done = fallocate(fd, 0, 0, (off_t)size) == 0;
    Py_END_ALLOW_THREADS
#endif
    return PyBool_FromLong(done);
}

static PyMethodDef methods[] = {
    {"rotate_block", rotate_block, METH_VARARGS,
     "Fill rows of a table by angle addition; return the number of undecided elements."},
    {"preallocate", preallocate, METH_VARARGS,
     "Reserve a file's blocks (Linux fallocate); return whether it was done."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rotate", NULL, -1, methods};

PyMODINIT_FUNC PyInit__rotate(void) { return PyModule_Create(&module); }
