/* The C library's own float32 sinf, cosf and powf over arrays: what XLA's CPU backend calls for
 * float32 sin, cos and pow (jax[cpu], Keras's JAX backend). No arithmetic of ours: each element
 * is one call, so a table is the C library's bit for bit.
 *
 *   sinf(x, out), cosf(x, out)     out[k] = f(x[k])         float32 buffers of one length
 *   powf(base, x, out)             out[k] = powf(base, x[k])
 *
 * The GIL is released while the loop runs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>

static int float32_pair(PyObject *args, Py_buffer *in, Py_buffer *out, float *base, int with_base)
{
    int ok = with_base ? PyArg_ParseTuple(args, "fy*w*", base, in, out)
                       : PyArg_ParseTuple(args, "y*w*", in, out);
    if (!ok)
        return 0;
    if (in->len != out->len || in->len % (Py_ssize_t)sizeof(float)) {
        PyBuffer_Release(in);
        PyBuffer_Release(out);
        PyErr_SetString(PyExc_ValueError, "float32 buffers of one length expected");
        return 0;
    }
    return 1;
}

static PyObject *apply(PyObject *args, float (*f)(float))
{
    Py_buffer in, out;
    if (!float32_pair(args, &in, &out, NULL, 0))
        return NULL;
    const float *x = in.buf;
    float *y = out.buf;
    Py_ssize_t n = in.len / (Py_ssize_t)sizeof(float);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < n; k++)
        y[k] = f(x[k]);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&in);
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
}

static float call_sinf(float x) { return sinf(x); }
static float call_cosf(float x) { return cosf(x); }

static PyObject *py_sinf(PyObject *self, PyObject *args) { return apply(args, call_sinf); }
static PyObject *py_cosf(PyObject *self, PyObject *args) { return apply(args, call_cosf); }

static PyObject *py_powf(PyObject *self, PyObject *args)
{
    Py_buffer in, out;
    float base;
    if (!float32_pair(args, &in, &out, &base, 1))
        return NULL;
    const float *x = in.buf;
    float *y = out.buf;
    Py_ssize_t n = in.len / (Py_ssize_t)sizeof(float);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < n; k++)
        y[k] = powf(base, x[k]);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&in);
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"sinf", py_sinf, METH_VARARGS, "out[k] = sinf(x[k]), float32 buffers"},
    {"cosf", py_cosf, METH_VARARGS, "out[k] = cosf(x[k]), float32 buffers"},
    {"powf", py_powf, METH_VARARGS, "out[k] = powf(base, x[k]), float32 buffers"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_libm", NULL, -1, methods};

PyMODINIT_FUNC PyInit__libm(void) { return PyModule_Create(&module); }
