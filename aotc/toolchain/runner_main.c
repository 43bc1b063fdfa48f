/* aotc runner: runs one compiled model on inputs from files, or times it, using
   only the model's public C API. It is a template over the model's C prefix:
   compile it with -DAOTC_RUNNER_PREFIX=<prefix> (and, to check declarations
   against the generated header, -DAOTC_RUNNER_HEADER="<model>.h") and link it
   with the model's object, libm and pthreads.

   usage: runner [-W WEIGHTS] COMMAND ...
     -W WEIGHTS                          load the model's weights file first (a model
                                         compiled with --weights file; the runner is
                                         then compiled with -DAOTC_RUNNER_WEIGHTS)
     runner info                         signature as one JSON object
     runner run DIR [THREADS [DEADLINE_NS]]
                                         DIR/arg<i>.bin -> DIR/result<i>.bin (raw
                                         row-major bytes, exactly P_arg_bytes(i));
                                         a run past DEADLINE_NS is stopped (exit 3)
     runner bench ITERS THREADS WARMUP [DIR]
                                         time P_run; inputs are random (seeded,
                                         type-aware) unless DIR has arg<i>.bin;
                                         prints one JSON object of microseconds
                                         (with -DAOTC_RUNNER_PROFILE, for a model
                                         compiled with --profile, also "profile":
                                         one row per kernel over the timed runs)
   exit status: 0 ok, 1 usage or file error, 2 the model reported an error, 3 the run
   was stopped at its deadline. On Linux the runner dies with the process that started it. */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <signal.h>
#include <sys/prctl.h>
#endif

#ifndef AOTC_RUNNER_PREFIX
#error "compile with -DAOTC_RUNNER_PREFIX=<model prefix>"
#endif

#define RN_CAT_(a, b) a##b
#define RN_CAT(a, b) RN_CAT_(a, b)
#define RN_STR_(x) #x
#define RN_STR(x) RN_STR_(x)
#define M(suffix) RN_CAT(AOTC_RUNNER_PREFIX, suffix)

#ifdef AOTC_RUNNER_HEADER
#include AOTC_RUNNER_HEADER
#else
/* The fixed API contract of every generated model. */
typedef struct M(_instance) M(_instance);
typedef enum { M(_ALLOC_ALL) = 0, M(_ALLOC_RESULTS_AND_TEMPS) = 1, M(_ALLOC_NONE) = 2 } M(_alloc_mode);
M(_instance) * M(_create)(M(_alloc_mode) mode);
void M(_destroy)(M(_instance) * m);
int M(_run)(M(_instance) * m);
const char* M(_error_msg)(const M(_instance) * m);
int M(_set_num_threads)(M(_instance) * m, int n);
int M(_set_deadline)(M(_instance) * m, uint64_t ns);
void* M(_arg_data)(M(_instance) * m, int i);
void* M(_result_data)(M(_instance) * m, int i);
const char* M(_arg_name)(int i);
const char* M(_arg_type)(int i);
int M(_arg_rank)(int i);
const int64_t* M(_arg_dims)(int i);
size_t M(_arg_bytes)(int i);
int M(_arg_is_variable)(int i);
const char* M(_result_name)(int i);
const char* M(_result_type)(int i);
int M(_result_rank)(int i);
const int64_t* M(_result_dims)(int i);
size_t M(_result_bytes)(int i);
#ifdef AOTC_RUNNER_WEIGHTS
int M(_load_weights)(M(_instance) * m, const char* path);
#endif
#endif

#if defined(AOTC_RUNNER_PROFILE) && !defined(AOTC_RUNNER_HEADER)
#error "AOTC_RUNNER_PROFILE needs the model's header (AOTC_RUNNER_HEADER)"
#endif

typedef M(_instance) model_t;

enum { RN_OK = 0, RN_ERR_CANCELLED = 10, RN_MAX_PORTS = 1 << 20 };

typedef struct {
    model_t* m;
    int num_args, num_results;
    void** args;     /* the instance's own buffers (P_ALLOC_ALL) */
    void** results;
} runner_t;

static const char* weights_path = 0; /* -W: the weights file loaded into each instance */

static void die(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "runner: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* The first index without a name is the port count. */
static int count_ports(const char* (*name)(int)) {
    for (int i = 0; i < RN_MAX_PORTS; ++i)
        if (!name(i)) return i;
    die("cannot count the model's ports");
    return 0;
}

/* The instance allocates every buffer (P_ALLOC_ALL), so runs and timings see the
 * memory an application that lets it allocate gets (huge pages under large
 * buffers on Linux). */
static void runner_open(runner_t* r) {
    r->m = M(_create)(M(_ALLOC_ALL));
    if (!r->m) die("creating the model instance failed (out of memory)");
    if (weights_path) {
#ifdef AOTC_RUNNER_WEIGHTS
        int rc = M(_load_weights)(r->m, weights_path);
        if (rc != RN_OK) {
            fprintf(stderr, "runner: %s_load_weights failed (error %d): %s\n", RN_STR(AOTC_RUNNER_PREFIX), rc,
                    M(_error_msg)(r->m));
            exit(2);
        }
#else
        die("-W: this runner was built for a model without a weights file");
#endif
    }
    r->num_args = count_ports(M(_arg_name));
    r->num_results = count_ports(M(_result_name));
    r->args = (void**)calloc((size_t)r->num_args + 1, sizeof(void*));
    r->results = (void**)calloc((size_t)r->num_results + 1, sizeof(void*));
    if (!r->args || !r->results) die("out of memory");
    for (int i = 0; i < r->num_args; ++i) {
        r->args[i] = M(_arg_data)(r->m, i);
    }
    for (int i = 0; i < r->num_results; ++i) {
        r->results[i] = M(_result_data)(r->m, i);
    }
}

static void runner_close(runner_t* r) {
    M(_destroy)(r->m);
    free(r->args);
    free(r->results);
}

static void set_threads(runner_t* r, long threads) {
    if (M(_set_num_threads)(r->m, (int)threads) != RN_OK) {
        fprintf(stderr, "runner: set_num_threads(%ld) failed: %s\n", threads, M(_error_msg)(r->m));
        exit(2);
    }
}

static int report_run_error(runner_t* r, int rc) {
    fprintf(stderr, "runner: %s_run failed (error %d): %s\n", RN_STR(AOTC_RUNNER_PREFIX), rc,
            M(_error_msg)(r->m));
    return 2;
}

static int run_once(runner_t* r) {
    int rc = M(_run)(r->m);
    if (rc != RN_OK) report_run_error(r, rc);
    return rc;
}

/* ------------------------------------------------------------------ files */

static char* port_path(const char* dir, const char* kind, int i) {
    size_t n = strlen(dir) + strlen(kind) + 32;
    char* p = (char*)malloc(n);
    if (!p) die("out of memory");
    snprintf(p, n, "%s/%s%d.bin", dir, kind, i);
    return p;
}

static void read_exact(const char* path, void* buf, size_t bytes) {
    FILE* f = fopen(path, "rb");
    if (!f) die("cannot open %s", path);
    size_t got = bytes ? fread(buf, 1, bytes, f) : 0;
    int extra = fgetc(f) != EOF;
    fclose(f);
    if (got != bytes || extra) die("%s: wrong size, expected exactly %zu bytes", path, bytes);
}

static void write_all(const char* path, const void* buf, size_t bytes) {
    FILE* f = fopen(path, "wb");
    if (!f) die("cannot create %s", path);
    size_t put = bytes ? fwrite(buf, 1, bytes, f) : 0;
    if (fclose(f) != 0 || put != bytes) die("cannot write %s (%zu bytes)", path, bytes);
}

static void read_args(runner_t* r, const char* dir) {
    for (int i = 0; i < r->num_args; ++i) {
        char* p = port_path(dir, "arg", i);
        read_exact(p, r->args[i], M(_arg_bytes)(i));
        free(p);
    }
}

/* ------------------------------------------------------------------ random inputs */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng_next(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static double rng_unit(void) { return (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0; }

/* A random finite small float of an 8- or 16-bit format: sign, one of two
   exponents just below the bias (values in ±[1/4, 1) for IEEE-like biases),
   random mantissa. */
static uint16_t small_float_bits(int exp_bits, int man_bits) {
    uint64_t x = rng_next();
    int bias = (1 << (exp_bits - 1)) - 1;
    uint16_t sign = (uint16_t)((x & 1u) << (exp_bits + man_bits));
    uint16_t e = (uint16_t)(bias - 1 - (int)((x >> 1) & 1u));
    uint16_t man = (uint16_t)((x >> 2) & ((1u << man_bits) - 1u));
    return (uint16_t)(sign | (uint16_t)(e << man_bits) | man);
}

static void fill_random(const char* type, void* buf, size_t bytes) {
    unsigned char* b = (unsigned char*)buf;
    if (!strcmp(type, "f32") || !strcmp(type, "c64")) {
        for (size_t i = 0; i + 4 <= bytes; i += 4) { float v = (float)rng_unit(); memcpy(b + i, &v, 4); }
    } else if (!strcmp(type, "f64") || !strcmp(type, "c128")) {
        for (size_t i = 0; i + 8 <= bytes; i += 8) { double v = rng_unit(); memcpy(b + i, &v, 8); }
    } else if (!strcmp(type, "bf16") || !strcmp(type, "f16")) {
        int e = type[0] == 'b' ? 8 : 5, man = type[0] == 'b' ? 7 : 10;
        for (size_t i = 0; i + 2 <= bytes; i += 2) { uint16_t v = small_float_bits(e, man); memcpy(b + i, &v, 2); }
    } else if (!strncmp(type, "f8", 2)) {
        int e = 4, man = 3;
        if (!strncmp(type, "f8e5m2", 6)) e = 5, man = 2;
        if (!strncmp(type, "f8e3m4", 6)) e = 3, man = 4;
        for (size_t i = 0; i < bytes; ++i) b[i] = (unsigned char)small_float_bits(e, man);
    } else if (!strcmp(type, "pred")) {
        for (size_t i = 0; i < bytes; ++i) b[i] = (unsigned char)(rng_next() & 1u);
    } else if (type[0] == 's' || type[0] == 'u') {
        size_t w = (size_t)atoi(type + 1) / 8;
        if (w == 0) w = 1; /* s4/u4: one byte per element */
        for (size_t i = 0; i + w <= bytes; i += w) {
            int64_t v = (int64_t)(rng_next() % 16u) - (type[0] == 's' ? 8 : 0);
            for (size_t k = 0; k < w; ++k) b[i + k] = (unsigned char)((uint64_t)v >> (8 * k));
        }
    } /* anything else stays zero */
}

/* ------------------------------------------------------------------ commands */

static void json_string(const char* s) {
    putchar('"');
    for (; s && *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static void json_port(int is_arg, int i) {
    const char* name = is_arg ? M(_arg_name)(i) : M(_result_name)(i);
    const char* type = is_arg ? M(_arg_type)(i) : M(_result_type)(i);
    int rank = is_arg ? M(_arg_rank)(i) : M(_result_rank)(i);
    const int64_t* dims = is_arg ? M(_arg_dims)(i) : M(_result_dims)(i);
    printf("{\"name\":");
    json_string(name);
    printf(",\"type\":");
    json_string(type);
    printf(",\"dims\":[");
    for (int d = 0; d < rank; ++d) printf("%s%lld", d ? "," : "", (long long)dims[d]);
    printf("],\"bytes\":%zu", is_arg ? M(_arg_bytes)(i) : M(_result_bytes)(i));
    if (is_arg) printf(",\"variable\":%s", M(_arg_is_variable)(i) ? "true" : "false");
    putchar('}');
}

static int cmd_info(void) {
    runner_t r;
    runner_open(&r);
    printf("{\"name\":");
    json_string(RN_STR(AOTC_RUNNER_PREFIX));
    printf(",\"args\":[");
    for (int i = 0; i < r.num_args; ++i) { if (i) putchar(','); json_port(1, i); }
    printf("],\"results\":[");
    for (int i = 0; i < r.num_results; ++i) { if (i) putchar(','); json_port(0, i); }
    printf("]}\n");
    runner_close(&r);
    return 0;
}

static int cmd_run(const char* dir, long threads, unsigned long long deadline_ns) {
    runner_t r;
    runner_open(&r);
    set_threads(&r, threads);
    if (M(_set_deadline)(r.m, (uint64_t)deadline_ns) != RN_OK) die("set_deadline failed");
    read_args(&r, dir);
    int rc = run_once(&r);
    if (rc == RN_ERR_CANCELLED) return 3;
    if (rc != RN_OK) return 2;
    for (int i = 0; i < r.num_results; ++i) {
        char* p = port_path(dir, "result", i);
        write_all(p, r.results[i], M(_result_bytes)(i));
        free(p);
    }
    runner_close(&r);
    return 0;
}

#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
static double now_us(void) { /* MinGW has clock_gettime only in libwinpthread */
    LARGE_INTEGER t, f;
    QueryPerformanceCounter(&t);
    QueryPerformanceFrequency(&f);
    return (double)t.QuadPart * (1e6 / (double)f.QuadPart);
}
#else
static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}
#endif

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

#ifdef AOTC_RUNNER_PROFILE
/* The model's kernel table (compiled with --profile) as a JSON member. */
static void json_profile(model_t* m) {
    printf(",\"profile\":[");
    for (int i = 0; i < M(_profile_count)(); ++i) {
        M(_profile_row) row;
        if (M(_profile_entry)(m, i, &row) != RN_OK) die("reading profile row %d failed", i);
        printf("%s{\"kernel\":", i ? "," : "");
        json_string(row.kernel);
        printf(",\"hlo\":");
        json_string(row.hlo);
        printf(",\"calls\":%llu,\"ns\":%llu,\"flops\":%llu,\"bytes\":%llu}", (unsigned long long)row.calls,
               (unsigned long long)row.total_ns, (unsigned long long)row.flops, (unsigned long long)row.bytes);
    }
    putchar(']');
}
#endif

static int cmd_bench(long iters, long threads, long warmup, const char* dir) {
    runner_t r;
    runner_open(&r);
    set_threads(&r, threads);
    if (dir) {
        read_args(&r, dir);
    } else {
        for (int i = 0; i < r.num_args; ++i) fill_random(M(_arg_type)(i), r.args[i], M(_arg_bytes)(i));
    }
    double* t = (double*)malloc((size_t)iters * sizeof(double));
    if (!t) die("out of memory");
    for (long k = 0; k < warmup; ++k)
        if (run_once(&r) != RN_OK) return 2;
#ifdef AOTC_RUNNER_PROFILE
    M(_profile_reset)(r.m);
#endif
    for (long k = 0; k < iters; ++k) {
        double t0 = now_us();
        int rc = M(_run)(r.m);
        t[k] = now_us() - t0;
        if (rc != RN_OK) return report_run_error(&r, rc);
    }
    double sum = 0.0;
    for (long k = 0; k < iters; ++k) sum += t[k];
    qsort(t, (size_t)iters, sizeof(double), cmp_double);
    double median = iters % 2 ? t[iters / 2] : 0.5 * (t[iters / 2 - 1] + t[iters / 2]);
    printf("{\"median_us\":%.3f,\"min_us\":%.3f,\"mean_us\":%.3f,\"max_us\":%.3f,"
           "\"iters\":%ld,\"threads\":%ld,\"warmup\":%ld",
           median, t[0], sum / (double)iters, t[iters - 1], iters, threads, warmup);
#ifdef AOTC_RUNNER_PROFILE
    json_profile(r.m);
#endif
    printf("}\n");
    free(t);
    runner_close(&r);
    return 0;
}

static long parse_count(const char* s, const char* what, long min) {
    char* end = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < min) die("%s must be an integer >= %ld", what, min);
    return v;
}

static unsigned long long parse_ns(const char* s) {
    char* end = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || *s == '-') die("DEADLINE_NS must be an integer >= 0");
    return v;
}

static int usage(void) {
    fprintf(stderr, "usage: runner [-W WEIGHTS] info\n"
                    "       runner [-W WEIGHTS] run DIR [THREADS [DEADLINE_NS]]\n"
                    "       runner [-W WEIGHTS] bench ITERS THREADS WARMUP [DIR]\n");
    return 1;
}

int main(int argc, char** argv) {
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);  /* a killed `aotc run` leaves no runner behind */
#endif
    if (argc >= 3 && !strcmp(argv[1], "-W")) {
        weights_path = argv[2];
        argv[2] = argv[0];
        argc -= 2;
        argv += 2;
    }
    if (argc >= 2 && !strcmp(argv[1], "info") && argc == 2) return cmd_info();
    if (argc >= 3 && !strcmp(argv[1], "run") && argc <= 5)
        return cmd_run(argv[2], argc >= 4 ? parse_count(argv[3], "THREADS", 1) : 1, argc == 5 ? parse_ns(argv[4]) : 0);
    if (argc >= 5 && !strcmp(argv[1], "bench") && argc <= 6) {
        const char* dir = argc == 6 ? argv[5] : 0;
        return cmd_bench(parse_count(argv[2], "ITERS", 1), parse_count(argv[3], "THREADS", 1),
                         parse_count(argv[4], "WARMUP", 0), dir);
    }
    return usage();
}
