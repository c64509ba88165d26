/* Sums a rotation is read back from (pe_cli/analysis/rotation.py), over a block of BEFORE and
 * AFTER rows of (rows, vectors, head_dim) elements, in one sweep of the elements; and the
 * rebuild's float32 comparison (rotation_rebuild.py, at the end of this file).
 *
 * A rotary op turns each pair of dims: z = x[first] + i x[second] before, w = y[out_first] +
 * i y[out_second] after. Per (row, pair), summed over the vectors:
 *
 *   power = sum |z|^2     wpower = sum |w|^2     cross = sum w conj(z)
 *
 * and over every (row, vector, pair), with off = |w| - s0 |z| (s0: a scale read beforehand, so
 * that the lengths' misfit is summed without cancelling):
 *
 *   a = sum off^2         b = sum |z| off
 *
 * Per dim, over the dims the caller still watches (those not yet seen to move, and those past
 * the rotary dim): whether it differs from BEFORE by more than `unit` (x and y's rounding), its
 * largest |y - x| (what a partial-rotary tail must keep at 0), the sum of BEFORE's squares, and
 * whether every value is finite. The dims that turn need no such sweep once seen to move: their
 * values are in the pair sums, whose power and wpower are finite exactly where they are (the
 * squares of float32 values cannot overflow a double).
 *
 * Every value is widened to double before it is used, and each is the same expression numpy
 * evaluates on float64 arrays in rotation.py's fallback: products of float32 values are exact
 * in double, so the sums differ from numpy's only by the order they are added in. No
 * temporaries, no allocation, and the GIL released: numpy's path makes about twenty passes over
 * float64 copies of the block, this one pass over the values as they are stored.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>

enum { F32 = 0, F64 = 1 };

#define DEFINE_PAIRS(T, NAME)                                                                    \
    static void NAME(const T *x, const T *y, Py_ssize_t rows, Py_ssize_t vectors,              \
                     Py_ssize_t dim, Py_ssize_t pairs, const int64_t *first,                   \
                     const int64_t *second, const int64_t *out_first, const int64_t *out_second, \
                     double s0, double *power, double *wpower, double *cross_re,               \
                     double *cross_im, double *a, double *b) {                                 \
        double sum_a = 0.0, sum_b = 0.0;                                                       \
        for (Py_ssize_t r = 0; r < rows; r++) {                                                \
            double *pw = power + r * pairs, *ww = wpower + r * pairs;                          \
            double *cr = cross_re + r * pairs, *ci = cross_im + r * pairs;                     \
            for (Py_ssize_t k = 0; k < pairs; k++) pw[k] = ww[k] = cr[k] = ci[k] = 0.0;       \
            for (Py_ssize_t v = 0; v < vectors; v++) {                                         \
                const T *xv = x + (r * vectors + v) * dim, *yv = y + (r * vectors + v) * dim;  \
                for (Py_ssize_t k = 0; k < pairs; k++) {                                       \
                    double zr = xv[first[k]], zi = xv[second[k]];                              \
                    double wr = yv[out_first[k]], wi = yv[out_second[k]];                      \
                    double lz2 = zr * zr + zi * zi, lw2 = wr * wr + wi * wi;                   \
                    pw[k] += lz2;                                                              \
                    ww[k] += lw2;                                                              \
                    cr[k] += wr * zr + wi * zi;                                                \
                    ci[k] += wi * zr - wr * zi;                                                \
                    double lz = sqrt(lz2), off = sqrt(lw2) + lz * -s0;                         \
                    sum_b += lz * off;                                                         \
                    sum_a += off * off;                                                        \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
        *a = sum_a;                                                                            \
        *b = sum_b;                                                                            \
    }

DEFINE_PAIRS(float, pairs_f32)
DEFINE_PAIRS(double, pairs_f64)

#define DEFINE_DIMS(T, NAME)                                                                     \
    static int NAME(const T *x, const T *y, Py_ssize_t count, Py_ssize_t dim,                  \
                    const int64_t *watch, Py_ssize_t watched, double unit, uint8_t *moved,     \
                    double *largest, double *squares) {                                        \
        int finite = 1;                                                                        \
        for (Py_ssize_t n = 0; n < count; n++) {                                               \
            const T *xv = x + n * dim, *yv = y + n * dim;                                      \
            for (Py_ssize_t j = 0; j < watched; j++) {                                         \
                Py_ssize_t d = watch[j];                                                       \
                double xd = xv[d], yd = yv[d];                                                 \
                if (!isfinite(xd) || !isfinite(yd)) finite = 0;                                \
                squares[d] += xd * xd;                                                         \
                double gap = fabs(yd - xd);                                                    \
                if (!moved[d] && gap > unit * (fabs(xd) + fabs(yd))) moved[d] = 1;             \
                if (gap > largest[d]) largest[d] = gap;                                        \
            }                                                                                  \
        }                                                                                      \
        return finite;                                                                         \
    }

DEFINE_DIMS(float, dims_f32)
DEFINE_DIMS(double, dims_f64)

static int indices_fit(const Py_buffer *indices, Py_ssize_t pairs, Py_ssize_t dim) {
    const int64_t *i = indices->buf;
    if (indices->len != pairs * 8) return 0;
    for (Py_ssize_t k = 0; k < pairs; k++)
        if (i[k] < 0 || i[k] >= dim) return 0;
    return 1;
}

/* pair_sums(x, y, kind, rows, vectors, dim, first, second, out_first, out_second, s0, power,
 * wpower, cross_re, cross_im) -> (a, b); the four outputs are (rows, pairs) float64. */
static PyObject *pair_sums(PyObject *self, PyObject *args) {
    Py_buffer x, y, first, second, out_first, out_second, power, wpower, cross_re, cross_im;
    int kind;
    Py_ssize_t rows, vectors, dim;
    double s0, a = 0.0, b = 0.0;
    if (!PyArg_ParseTuple(args, "y*y*innny*y*y*y*dw*w*w*w*", &x, &y, &kind, &rows, &vectors, &dim,
                          &first, &second, &out_first, &out_second, &s0, &power, &wpower,
                          &cross_re, &cross_im))
        return NULL;
    Py_buffer *all[] = {&x, &y, &first, &second, &out_first, &out_second,
                        &power, &wpower, &cross_re, &cross_im};
    Py_ssize_t item = kind == F32 ? 4 : 8, pairs = first.len / 8;
    Py_ssize_t size = rows * vectors * dim;
    int fits = (kind == F32 || kind == F64) && rows >= 0 && vectors >= 0 && dim >= 0 &&
               x.len == size * item && y.len == size * item && indices_fit(&first, pairs, dim) &&
               indices_fit(&second, pairs, dim) && indices_fit(&out_first, pairs, dim) &&
               indices_fit(&out_second, pairs, dim);
    for (int o = 6; o < 10; o++) fits = fits && all[o]->len == rows * pairs * 8;
    if (fits) {
        Py_BEGIN_ALLOW_THREADS
        if (kind == F32)
            pairs_f32(x.buf, y.buf, rows, vectors, dim, pairs, first.buf, second.buf, out_first.buf,
                      out_second.buf, s0, power.buf, wpower.buf, cross_re.buf, cross_im.buf, &a,
                      &b);
        else
            pairs_f64(x.buf, y.buf, rows, vectors, dim, pairs, first.buf, second.buf, out_first.buf,
                      out_second.buf, s0, power.buf, wpower.buf, cross_re.buf, cross_im.buf, &a,
                      &b);
        Py_END_ALLOW_THREADS
    }
    for (size_t o = 0; o < sizeof all / sizeof *all; o++) PyBuffer_Release(all[o]);
    if (!fits) {
        PyErr_SetString(PyExc_ValueError, "pair_sums: buffers or dims do not fit the geometry");
        return NULL;
    }
    return Py_BuildValue("dd", a, b);
}

/* dim_stats(x, y, kind, count, dim, watch, unit, moved, largest, squares) -> finite: over the
 * dims in `watch` (int64) of count vectors of dim elements, whether every value is finite;
 * moved (uint8), largest and squares (float64) have one element a dim, updated there: moved
 * set where the dim differs by more than unit (|x| + |y|), largest raised to its largest
 * |y - x|, squares added BEFORE's squares. */
static PyObject *dim_stats(PyObject *self, PyObject *args) {
    Py_buffer x, y, watch, moved, largest, squares;
    int kind, finite = 1;
    Py_ssize_t count, dim;
    double unit;
    if (!PyArg_ParseTuple(args, "y*y*inny*dw*w*w*", &x, &y, &kind, &count, &dim, &watch, &unit,
                          &moved, &largest, &squares))
        return NULL;
    Py_ssize_t item = kind == F32 ? 4 : 8, watched = watch.len / 8;
    int fits = (kind == F32 || kind == F64) && count >= 0 && dim >= 0 &&
               x.len == count * dim * item && y.len == count * dim * item &&
               indices_fit(&watch, watched, dim) && moved.len == dim && largest.len == dim * 8 &&
               squares.len == dim * 8;
    if (fits) {
        Py_BEGIN_ALLOW_THREADS
        if (kind == F32)
            finite = dims_f32(x.buf, y.buf, count, dim, watch.buf, watched, unit, moved.buf,
                              largest.buf, squares.buf);
        else
            finite = dims_f64(x.buf, y.buf, count, dim, watch.buf, watched, unit, moved.buf,
                              largest.buf, squares.buf);
        Py_END_ALLOW_THREADS
    }
    Py_buffer *all[] = {&x, &y, &watch, &moved, &largest, &squares};
    for (size_t o = 0; o < sizeof all / sizeof *all; o++) PyBuffer_Release(all[o]);
    if (!fits) {
        PyErr_SetString(PyExc_ValueError, "dim_stats: buffers do not fit the geometry");
        return NULL;
    }
    return PyBool_FromLong(finite);
}

/* The rebuild's comparison (rotation_rebuild.py): BEFORE's pairs turned by a library's float32
 * cos and sin as the rotate_half form computes in float32, each product and the sum rounded:
 *
 *   real = x cos - y sin     imag = y cos + x sin
 *
 * (numpy's float32 arithmetic exactly: floats, no fused multiply-add, -ffp-contract=off), set
 * against AFTER's float32 values; the dims past the rotary dim against BEFORE's own. For each of
 * the three parts (real, imag, tail): whether every value is AFTER's, and where not, the
 * largest |difference| and its first (row, vector, index) in C order, as numpy's argmax. */
typedef struct {
    double largest;
    Py_ssize_t r, v, k;
} Part;

static inline void differ(Part *part, float got, float want, Py_ssize_t r, Py_ssize_t v,
                          Py_ssize_t k) {
    if (got == want) return;
    double gap = fabs((double)got - (double)want);
    if (gap > part->largest) *part = (Part){gap, r, v, k};
}

static void turned_f32(const float *x, const float *y, const float *cos, const float *sin,
                       Py_ssize_t rows, Py_ssize_t vectors, Py_ssize_t dim, Py_ssize_t pairs,
                       const int64_t *first, const int64_t *second, const int64_t *out_first,
                       const int64_t *out_second, Py_ssize_t width, Part parts[3]) {
    for (Py_ssize_t r = 0; r < rows; r++) {
        const float *c = cos + r * pairs, *s = sin + r * pairs;
        for (Py_ssize_t v = 0; v < vectors; v++) {
            const float *xv = x + (r * vectors + v) * dim, *yv = y + (r * vectors + v) * dim;
            for (Py_ssize_t k = 0; k < pairs; k++) {
                float xr = xv[first[k]], xi = xv[second[k]];
                float real = xr * c[k], imag = xi * c[k];
                float minus = xi * s[k], plus = xr * s[k];
                real = real - minus;
                imag = imag + plus;
                differ(&parts[0], real, yv[out_first[k]], r, v, k);
                differ(&parts[1], imag, yv[out_second[k]], r, v, k);
            }
            for (Py_ssize_t d = width; d < dim; d++) differ(&parts[2], xv[d], yv[d], r, v, d - width);
        }
    }
}

/* turned_gaps(x, y, cos, sin, rows, vectors, dim, first, second, out_first, out_second, width)
 * -> ((largest, row, vector, index) for real, imag and tail), largest -1 where every value of
 * the part is AFTER's; x and y are (rows, vectors, dim) float32, cos and sin (rows, pairs). */
static PyObject *turned_gaps(PyObject *self, PyObject *args) {
    Py_buffer x, y, cos, sin, first, second, out_first, out_second;
    Py_ssize_t rows, vectors, dim, width;
    if (!PyArg_ParseTuple(args, "y*y*y*y*nnny*y*y*y*n", &x, &y, &cos, &sin, &rows, &vectors, &dim,
                          &first, &second, &out_first, &out_second, &width))
        return NULL;
    Py_buffer *all[] = {&x, &y, &cos, &sin, &first, &second, &out_first, &out_second};
    Py_ssize_t pairs = first.len / 8, size = rows * vectors * dim;
    int fits = rows >= 0 && vectors >= 0 && dim >= 0 && width >= 0 && width <= dim &&
               x.len == size * 4 && y.len == size * 4 && cos.len == rows * pairs * 4 &&
               sin.len == rows * pairs * 4 && indices_fit(&first, pairs, dim) &&
               indices_fit(&second, pairs, dim) && indices_fit(&out_first, pairs, dim) &&
               indices_fit(&out_second, pairs, dim);
    Part parts[3] = {{-1.0, 0, 0, 0}, {-1.0, 0, 0, 0}, {-1.0, 0, 0, 0}};
    if (fits) {
        Py_BEGIN_ALLOW_THREADS
        turned_f32(x.buf, y.buf, cos.buf, sin.buf, rows, vectors, dim, pairs, first.buf, second.buf,
                   out_first.buf, out_second.buf, width, parts);
        Py_END_ALLOW_THREADS
    }
    for (size_t o = 0; o < sizeof all / sizeof *all; o++) PyBuffer_Release(all[o]);
    if (!fits) {
        PyErr_SetString(PyExc_ValueError, "turned_gaps: buffers or dims do not fit the geometry");
        return NULL;
    }
    return Py_BuildValue("(dnnn)(dnnn)(dnnn)", parts[0].largest, parts[0].r, parts[0].v, parts[0].k,
                         parts[1].largest, parts[1].r, parts[1].v, parts[1].k, parts[2].largest,
                         parts[2].r, parts[2].v, parts[2].k);
}

static PyMethodDef methods[] = {
    {"pair_sums", pair_sums, METH_VARARGS, "A block's per-pair sums (see the file's comment)."},
    {"dim_stats", dim_stats, METH_VARARGS, "A block's per-dim figures (see the file's comment)."},
    {"turned_gaps", turned_gaps, METH_VARARGS, "A float32 rebuild against AFTER (see above)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_pairs", NULL, -1, methods};

PyMODINIT_FUNC PyInit__pairs(void) { return PyModule_Create(&module); }
