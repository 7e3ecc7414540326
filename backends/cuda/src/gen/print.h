
// Printing: `print`, `printFloat` and `dprint` of scalars and strings, as
// the interpreter prints them. Host code, and kernels run on the CPU,
// print through the engine (`pmx_set_print`), which writes to the
// interpreter's own output, so that everything comes out in program order;
// host code waits for its kernels before a print, as before it touches
// tensor data. Kernels on a device print with the device's `printf`,
// whose output CUDA shows when the host next waits for the device.
#if !defined(PMX_DEVICE_ONLY)
static void (*pmx_print_fn)(const char *, int64_t) = 0;
extern "C" void pmx_set_print(void (*f)(const char *, int64_t)) { pmx_print_fn = f; }
#endif
PMX_FN void pmx_print_bytes(const char *s, int64_t n) {
#if defined(__CUDA_ARCH__)
  printf("%.*s", (int)n, s);
#else
  if (pmx_print_fn) pmx_print_fn(s, n);
  else fwrite(s, 1, (size_t)n, stdout);
#endif
}
// Text gathered before it is printed (a print is one piece of output
// where it fits).
struct pmx_text {
  char buf[256];
  int n;
};
PMX_FN void pmx_text_flush(pmx_text *t) {
  if (t->n > 0) pmx_print_bytes(t->buf, t->n);
  t->n = 0;
}
// A character as UTF-8.
PMX_FN void pmx_text_char(pmx_text *t, uint32_t c) {
  if (t->n > 248) pmx_text_flush(t);
  char *b = t->buf + t->n;
  if (c < 0x80) {
    b[0] = (char)c;
    t->n += 1;
  } else if (c < 0x800) {
    b[0] = (char)(0xC0 | (c >> 6));
    b[1] = (char)(0x80 | (c & 0x3F));
    t->n += 2;
  } else if (c < 0x10000) {
    b[0] = (char)(0xE0 | (c >> 12));
    b[1] = (char)(0x80 | ((c >> 6) & 0x3F));
    b[2] = (char)(0x80 | (c & 0x3F));
    t->n += 3;
  } else {
    b[0] = (char)(0xF0 | (c >> 18));
    b[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    b[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    b[3] = (char)(0x80 | (c & 0x3F));
    t->n += 4;
  }
}
PMX_FN void pmx_text_ascii(pmx_text *t, const char *s) {
  while (*s) pmx_text_char(t, (uint32_t)(unsigned char)*s++);
}
// A character as `dprint` shows it inside `quote`s (the interpreter's
// `show`): newline, tab, return, backslash and the quote escaped.
PMX_FN void pmx_text_escaped(pmx_text *t, uint32_t c, uint32_t quote) {
  if (c == '\n') pmx_text_ascii(t, "\\n");
  else if (c == '\t') pmx_text_ascii(t, "\\t");
  else if (c == '\r') pmx_text_ascii(t, "\\r");
  else if (c == '\\') pmx_text_ascii(t, "\\\\");
  else {
    if (c == quote) pmx_text_char(t, '\\');
    pmx_text_char(t, c);
  }
}
PMX_FN void pmx_text_int(pmx_text *t, int64_t v) {
  char d[24];
  int k = 0;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do {
    d[k++] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0) pmx_text_char(t, '-');
  while (k) pmx_text_char(t, (uint32_t)d[--k]);
}
// A float as the interpreter's `float2string`: C's `%.12g`, with a `.`
// after a number written with digits only; `nan`, `inf`, `-inf`.
PMX_FN void pmx_text_float(pmx_text *t, double x) {
  if (x != x) {
    pmx_text_ascii(t, "nan");
    return;
  }
  if (isinf(x)) {
    pmx_text_ascii(t, x > 0 ? "inf" : "-inf");
    return;
  }
#if defined(__CUDA_ARCH__)
  // A device has no `snprintf`: its `printf` writes the number, and the
  // `.` is added where the number is whole and below 1e12, which is where
  // `%.12g` writes digits only (up to numbers of 12 digits with a
  // fraction that rounds away).
  pmx_text_flush(t);
  printf("%.12g", x);
  if (x == trunc(x) && fabs(x) < 1e12) pmx_text_char(t, '.');
#else
  char b[40];
  int n = snprintf(b, sizeof b, "%.12g", x);
  bool digits = true;
  for (int k = 0; k < n; k++) {
    if (b[k] != '-' && (b[k] < '0' || b[k] > '9')) digits = false;
  }
  pmx_text_ascii(t, b);
  if (digits) pmx_text_char(t, '.');
#endif
}
PMX_FN pmx_unit pmx_print(pmx_seq<uint32_t> s) {
  pmx_text t;
  t.n = 0;
  for (int64_t i = 0; i < s.len; i++) pmx_text_char(&t, s.data[i]);
  pmx_text_flush(&t);
  return pmx_unit();
}
// `flushStdout`: the engine's output is flushed (`n` = -1); a device's
// `printf` output is shown when the host waits.
PMX_FN pmx_unit pmx_flush() {
#if !defined(__CUDA_ARCH__)
  if (pmx_print_fn) pmx_print_fn(0, -1);
  else fflush(stdout);
#endif
  return pmx_unit();
}
PMX_FN pmx_unit pmx_print_float(double x) {
  pmx_text t;
  t.n = 0;
  pmx_text_float(&t, x);
  pmx_text_flush(&t);
  return pmx_unit();
}
PMX_FN pmx_unit pmx_dprint_int(int64_t v) {
  pmx_text t;
  t.n = 0;
  pmx_text_int(&t, v);
  pmx_text_flush(&t);
  return pmx_unit();
}
PMX_FN pmx_unit pmx_dprint_bool(bool v) {
  pmx_text t;
  t.n = 0;
  pmx_text_ascii(&t, v ? "true" : "false");
  pmx_text_flush(&t);
  return pmx_unit();
}
PMX_FN pmx_unit pmx_dprint_char(uint32_t c) {
  pmx_text t;
  t.n = 0;
  pmx_text_char(&t, '\'');
  pmx_text_escaped(&t, c, '\'');
  pmx_text_char(&t, '\'');
  pmx_text_flush(&t);
  return pmx_unit();
}
PMX_FN pmx_unit pmx_dprint_string(pmx_seq<uint32_t> s) {
  pmx_text t;
  t.n = 0;
  pmx_text_char(&t, '"');
  for (int64_t i = 0; i < s.len; i++) pmx_text_escaped(&t, s.data[i], '"');
  pmx_text_char(&t, '"');
  pmx_text_flush(&t);
  return pmx_unit();
}
