/*
 * workloads/interp/asm.c - the interp assembler and loader (format: docs/interp.md).
 *
 * Two passes over the lines: pass 1 collects labels, `.const` and the object
 * declarations and counts instructions; pass 2 assembles instructions and `.expect`
 * lines with every name resolved. Then a static analysis walks the code from the entry
 * point and from every CALL target (each a "context": main or a function) computing,
 * per instruction, the operand-stack depth and the atomic-section depth relative to
 * its frame. They must agree on every path, so underflow, unbalanced atomic sections,
 * RET/HALT inside a section, falling off the end and code shared between functions are
 * all load-time errors. The call graph must be acyclic, which bounds the stack a
 * thread needs; the VM then never has to check a bound at run time.
 *
 * Every input, however malformed, ends in a message with its line number: the fuzz
 * target (tests/fuzz/fuzz_asm.c) holds the loader to that.
 */
#include "workloads/interp/asm.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const asm_op_names[IV_NOPS] = {
    [IV_NOP] = "NOP", [IV_PUSH] = "PUSH", [IV_POP] = "POP", [IV_DUP] = "DUP",
    [IV_SWAP] = "SWAP", [IV_LOAD_GLOBAL] = "LOAD_GLOBAL", [IV_STORE_GLOBAL] = "STORE_GLOBAL",
    [IV_LOAD_LOCAL] = "LOAD_LOCAL", [IV_STORE_LOCAL] = "STORE_LOCAL", [IV_ADD] = "ADD",
    [IV_SUB] = "SUB", [IV_MUL] = "MUL", [IV_DIV] = "DIV", [IV_MOD] = "MOD", [IV_LT] = "LT",
    [IV_GT] = "GT", [IV_EQ] = "EQ", [IV_NOT] = "NOT", [IV_JUMP] = "JUMP",
    [IV_JUMP_IF_FALSE] = "JUMP_IF_FALSE", [IV_JUMP_IF_TRUE] = "JUMP_IF_TRUE",
    [IV_CALL] = "CALL", [IV_RET] = "RET", [IV_LIST_APPEND] = "LIST_APPEND",
    [IV_LIST_GET] = "LIST_GET", [IV_LIST_SET] = "LIST_SET", [IV_LIST_LEN] = "LIST_LEN",
    [IV_LIST_CLEAR] = "LIST_CLEAR", [IV_DICT_GET] = "DICT_GET", [IV_DICT_SET] = "DICT_SET",
    [IV_DICT_LEN] = "DICT_LEN", [IV_THREAD_ID] = "THREAD_ID",
    [IV_ATOMIC_BEGIN] = "ATOMIC_BEGIN", [IV_ATOMIC_END] = "ATOMIC_END", [IV_HALT] = "HALT",
    [IV_NEW_LIST] = "NEW_LIST", [IV_NEW_DICT] = "NEW_DICT", [IV_APPEND] = "APPEND",
    [IV_GETITEM] = "GETITEM", [IV_SETITEM] = "SETITEM", [IV_LEN] = "LEN",
    [IV_POPITEM] = "POPITEM", [IV_CONTAINS] = "CONTAINS", [IV_LIST_POP] = "LIST_POP",
};

#define IV_MEM_NAME_(NAME, name) [IV_MEM_##NAME] = #name,
const char *const iv_memory_names[IV_NMEM] = { IV_MEMORY_MODES(IV_MEM_NAME_) };
#undef IV_MEM_NAME_

int iv_memory_find(const char *name)
{
    for (int m = 0; m < IV_NMEM; m++)
        if (strcmp(iv_memory_names[m], name) == 0)
            return m;
    return -1;
}

/* The opcodes of the object model: they load only where --memory is not raw. */
static bool asm_obj_op(int op)
{
    return op >= IV_NEW_LIST && op < IV_NOPS;
}

const char *iv_op_name(int op)
{
    return op >= 0 && op < IV_NOPS ? asm_op_names[op] : "?";
}

/* Operand shape of each opcode. */
enum asm_shape { SH_NONE, SH_CONST, SH_INT, SH_LIST, SH_DICT, SH_LOCAL, SH_LABEL, SH_CALL };
static enum asm_shape asm_shape(int op)
{
    switch (op) {
    case IV_PUSH: return SH_CONST;
    case IV_LOAD_GLOBAL: case IV_STORE_GLOBAL: return SH_INT;
    case IV_LOAD_LOCAL: case IV_STORE_LOCAL: return SH_LOCAL;
    case IV_JUMP: case IV_JUMP_IF_FALSE: case IV_JUMP_IF_TRUE: return SH_LABEL;
    case IV_CALL: return SH_CALL;
    case IV_LIST_APPEND: case IV_LIST_GET: case IV_LIST_SET: case IV_LIST_LEN:
    case IV_LIST_CLEAR: case IV_LIST_POP: return SH_LIST;
    case IV_DICT_GET: case IV_DICT_SET: case IV_DICT_LEN: return SH_DICT;
    default: return SH_NONE;
    }
}

struct asm_label {
    char name[IV_NAME_MAX];
    int idx;                  /* instruction index it names (may equal ncode: past the end) */
    int line;
};

struct asm_const {
    char name[IV_NAME_MAX];
    int64_t v;
};

struct asm_st {
    const char *text;
    size_t len;
    const char *src;
    struct iv_program *prog;
    struct asm_label *labels;
    int nlabels, caplabels;
    struct asm_const consts[IV_MAX_CONSTS];
    int nconsts;
    int ninsn;                /* instructions counted (pass 1) / assembled (pass 2) */
    char *err;
    size_t errlen;
};

static int asm_err(struct asm_st *a, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int asm_err(struct asm_st *a, int line, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (line > 0)
        snprintf(a->err, a->errlen, "%s:%d: %s", a->src, line, msg);
    else
        snprintf(a->err, a->errlen, "%s: %s", a->src, msg);
    return -1;
}

/* ---- lexing one line (comments already cut, NUL-terminated) ---- */

static bool asm_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}
static const char *asm_skip(const char *p)
{
    while (asm_space(*p))
        p++;
    return p;
}
static bool asm_ident_start(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
static bool asm_ident_char(char c)
{
    return asm_ident_start(c) || (c >= '0' && c <= '9');
}

/* Reads an identifier at *pp into out. 1 read, 0 none there, -1 too long (message). */
static int asm_ident(struct asm_st *a, int line, const char **pp, char out[IV_NAME_MAX])
{
    const char *p = *pp;
    if (!asm_ident_start(*p))
        return 0;
    size_t n = 0;
    while (asm_ident_char(p[n]))
        n++;
    if (n >= IV_NAME_MAX)
        return asm_err(a, line, "name '%.*s...' longer than %d characters", 16, p,
                       IV_NAME_MAX - 1);
    memcpy(out, p, n);
    out[n] = 0;
    *pp = p + n;
    return 1;
}

/* Shows the start of the unexpected text in messages. */
static int asm_junk(struct asm_st *a, int line, const char *p, const char *after)
{
    return asm_err(a, line, "unexpected '%.20s' after %s", p, after);
}

static const struct asm_const *asm_find_const(const struct asm_st *a, const char *name)
{
    for (int i = 0; i < a->nconsts; i++)
        if (strcmp(a->consts[i].name, name) == 0)
            return &a->consts[i];
    return NULL;
}
static int asm_find_global(const struct asm_st *a, const char *name)
{
    for (int i = 0; i < a->prog->nglobals; i++)
        if (strcmp(a->prog->globals[i].name, name) == 0)
            return i;
    return -1;
}
static const struct asm_label *asm_find_label(const struct asm_st *a, const char *name)
{
    for (int i = 0; i < a->nlabels; i++)
        if (strcmp(a->labels[i].name, name) == 0)
            return &a->labels[i];
    return NULL;
}
static bool asm_reserved(const char *name)
{
    static const char *const words[] = { "RUNS", "THREADS", "ITER", "TID", "len", "sum",
                                         "int", "list", "dict", NULL };
    for (int i = 0; words[i]; i++)
        if (strcmp(words[i], name) == 0)
            return true;
    return false;
}

/* ---- expressions ---- */

struct asm_xp {
    struct asm_st *a;
    const char *p;
    int line;
    struct iv_expr *e;
    bool expect;               /* .expect: run counts and objects allowed */
    bool per_thread;           /* mentions TID or a per-thread object */
    int nest;
};

static int xp_emit(struct asm_xp *x, int kind, int64_t v, int g)
{
    if (x->e->n >= IV_EXPR_MAX)
        return asm_err(x->a, x->line, "expression too long (more than %d terms)", IV_EXPR_MAX);
    struct iv_enode *n = &x->e->node[x->e->n++];
    n->kind = (uint8_t)kind;
    n->v = v;
    n->g = g;
    return 0;
}

static int xp_expr(struct asm_xp *x);

static int xp_number(struct asm_xp *x)
{
    const char *p = x->p;
    uint64_t v = 0;
    int base = 10;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
        if (!isxdigit((unsigned char)*p))
            return asm_err(x->a, x->line, "bad number '%.20s'", x->p);
    }
    for (;; p++) {
        int d;
        if (*p >= '0' && *p <= '9')
            d = *p - '0';
        else if (base == 16 && *p >= 'a' && *p <= 'f')
            d = *p - 'a' + 10;
        else if (base == 16 && *p >= 'A' && *p <= 'F')
            d = *p - 'A' + 10;
        else
            break;
        if (v > ((uint64_t)INT64_MAX - (uint64_t)d) / (uint64_t)base)
            return asm_err(x->a, x->line, "number '%.24s' out of range (max %lld)", x->p,
                           (long long)INT64_MAX);
        v = v * (uint64_t)base + (uint64_t)d;
    }
    if (asm_ident_char(*p))
        return asm_err(x->a, x->line, "bad number '%.20s'", x->p);
    x->p = p;
    return xp_emit(x, IV_E_NUM, (int64_t)v, 0);
}

/* An object name inside len( ) or sum( ): must be a list or dict. */
static int xp_container(struct asm_xp *x, const char *fn)
{
    char name[IV_NAME_MAX];
    x->p = asm_skip(x->p);
    if (*x->p != '(')
        return asm_err(x->a, x->line, "expected '(' after %s", fn);
    x->p = asm_skip(x->p + 1);
    int r = asm_ident(x->a, x->line, &x->p, name);
    if (r < 0)
        return -1;
    if (r == 0)
        return asm_err(x->a, x->line, "expected a list or dict name in %s( )", fn);
    int g = asm_find_global(x->a, name);
    if (g < 0)
        return asm_err(x->a, x->line, "unknown object '%s' in %s( )", name, fn);
    if (x->a->prog->globals[g].kind == IV_KIND_INT)
        return asm_err(x->a, x->line, "%s( ) needs a list or dict, '%s' is an int", fn, name);
    x->p = asm_skip(x->p);
    if (*x->p != ')')
        return asm_err(x->a, x->line, "expected ')' after %s(%s", fn, name);
    x->p++;
    if (x->a->prog->globals[g].per_thread)
        x->per_thread = true;
    return xp_emit(x, fn[0] == 'l' ? IV_E_LEN : IV_E_SUM, 0, g);
}

static int xp_primary(struct asm_xp *x)
{
    x->p = asm_skip(x->p);
    char c = *x->p;
    if (c >= '0' && c <= '9')
        return xp_number(x);
    if (c == '(') {
        if (++x->nest > IV_EXPR_NEST)
            return asm_err(x->a, x->line, "expression nested deeper than %d", IV_EXPR_NEST);
        x->p++;
        if (xp_expr(x) < 0)
            return -1;
        x->p = asm_skip(x->p);
        if (*x->p != ')')
            return asm_err(x->a, x->line, "expected ')' in expression, found '%.20s'", x->p);
        x->p++;
        x->nest--;
        return 0;
    }
    char name[IV_NAME_MAX];
    int r = asm_ident(x->a, x->line, &x->p, name);
    if (r < 0)
        return -1;
    if (r == 0) {
        if (!*x->p)
            return asm_err(x->a, x->line, "expression ends too early");
        return asm_err(x->a, x->line, "unexpected '%.20s' in expression", x->p);
    }
    if (strcmp(name, "ITER") == 0)
        return xp_emit(x, IV_E_NUM, x->a->prog->params.iterations, 0);
    if (strcmp(name, "THREADS") == 0)
        return xp_emit(x, IV_E_NUM, x->a->prog->params.threads, 0);
    const struct asm_const *k = asm_find_const(x->a, name);
    if (k)
        return xp_emit(x, IV_E_NUM, k->v, 0);
    if (!x->expect)
        return asm_err(x->a, x->line,
                       "unknown constant '%s' (only numbers, ITER, THREADS and earlier "
                       ".const names are allowed here)", name);
    if (strcmp(name, "RUNS") == 0)
        return xp_emit(x, IV_E_RUNS, 0, 0);
    if (strcmp(name, "TID") == 0) {
        x->per_thread = true;
        return xp_emit(x, IV_E_TID, 0, 0);
    }
    if (strcmp(name, "len") == 0 || strcmp(name, "sum") == 0)
        return xp_container(x, name);
    int g = asm_find_global(x->a, name);
    if (g < 0)
        return asm_err(x->a, x->line, "unknown name '%s' in expression", name);
    const struct iv_global *gl = &x->a->prog->globals[g];
    if (gl->per_thread)
        x->per_thread = true;
    x->p = asm_skip(x->p);
    if (*x->p == '[') {
        if (gl->kind == IV_KIND_INT)
            return asm_err(x->a, x->line, "'%s' is an int, it cannot be indexed", name);
        if (++x->nest > IV_EXPR_NEST)
            return asm_err(x->a, x->line, "expression nested deeper than %d", IV_EXPR_NEST);
        x->p++;
        if (xp_expr(x) < 0)
            return -1;
        x->p = asm_skip(x->p);
        if (*x->p != ']')
            return asm_err(x->a, x->line, "expected ']' after %s[...", name);
        x->p++;
        x->nest--;
        return xp_emit(x, IV_E_GET, 0, g);
    }
    if (gl->kind != IV_KIND_INT)
        return asm_err(x->a, x->line, "'%s' is a %s: use len(%s), sum(%s) or %s[key]", name,
                       gl->kind == IV_KIND_LIST ? "list" : "dict", name, name, name);
    return xp_emit(x, IV_E_GVAL, 0, g);
}

static int xp_unary(struct asm_xp *x)
{
    x->p = asm_skip(x->p);
    if (*x->p == '-') {
        if (++x->nest > IV_EXPR_NEST)
            return asm_err(x->a, x->line, "expression nested deeper than %d", IV_EXPR_NEST);
        x->p++;
        if (xp_unary(x) < 0)
            return -1;
        x->nest--;
        return xp_emit(x, IV_E_NEG, 0, 0);
    }
    return xp_primary(x);
}

static int xp_term(struct asm_xp *x)
{
    if (xp_unary(x) < 0)
        return -1;
    for (;;) {
        x->p = asm_skip(x->p);
        char c = *x->p;
        if (c != '*' && c != '/' && c != '%')
            return 0;
        x->p++;
        if (xp_unary(x) < 0)
            return -1;
        if (xp_emit(x, c == '*' ? IV_E_MUL : c == '/' ? IV_E_DIV : IV_E_MOD, 0, 0) < 0)
            return -1;
    }
}

static int xp_expr(struct asm_xp *x)
{
    if (xp_term(x) < 0)
        return -1;
    for (;;) {
        x->p = asm_skip(x->p);
        char c = *x->p;
        if (c != '+' && c != '-')
            return 0;
        x->p++;
        if (xp_term(x) < 0)
            return -1;
        if (xp_emit(x, c == '+' ? IV_E_ADD : IV_E_SUB, 0, 0) < 0)
            return -1;
    }
}

int64_t iv_expr_eval(const struct iv_expr *e, const struct iv_env *env)
{
    int64_t st[IV_EXPR_MAX];
    int sp = 0;
    for (int i = 0; i < e->n; i++) {
        const struct iv_enode *n = &e->node[i];
        int64_t b;
        switch (n->kind) {
        case IV_E_NUM: st[sp++] = n->v; break;
        case IV_E_RUNS: st[sp++] = env->runs; break;
        case IV_E_THREADS: st[sp++] = env->threads; break;
        case IV_E_ITER: st[sp++] = env->iter; break;
        case IV_E_TID: st[sp++] = env->tid; break;
        case IV_E_GVAL: case IV_E_LEN: case IV_E_SUM:
            st[sp++] = env->obj ? env->obj(env->u, n->kind, n->g, env->tid, 0) : 0;
            break;
        case IV_E_GET:
            st[sp - 1] = env->obj ? env->obj(env->u, n->kind, n->g, env->tid, st[sp - 1]) : 0;
            break;
        case IV_E_NEG: st[sp - 1] = iv_sub(0, st[sp - 1]); break;
        default:
            b = st[--sp];
            switch (n->kind) {
            case IV_E_ADD: st[sp - 1] = iv_add(st[sp - 1], b); break;
            case IV_E_SUB: st[sp - 1] = iv_sub(st[sp - 1], b); break;
            case IV_E_MUL: st[sp - 1] = iv_mul(st[sp - 1], b); break;
            case IV_E_DIV: st[sp - 1] = iv_div(st[sp - 1], b); break;
            default: st[sp - 1] = iv_mod(st[sp - 1], b); break;
            }
        }
    }
    return sp > 0 ? st[sp - 1] : 0;
}

/* A load-time constant expression at x->p; its value in *v. */
static int asm_const_expr(struct asm_st *a, int line, const char **pp, int64_t *v)
{
    struct iv_expr e;
    e.n = 0;
    struct asm_xp x = { .a = a, .p = *pp, .line = line, .e = &e };
    if (xp_expr(&x) < 0)
        return -1;
    *pp = x.p;
    struct iv_env env = { .iter = a->prog->params.iterations,
                          .threads = a->prog->params.threads };
    *v = iv_expr_eval(&e, &env);
    return 0;
}

/* ---- pass 1: labels, constants, declarations ---- */

static int asm_new_name(struct asm_st *a, int line, const char *name)
{
    if (asm_reserved(name))
        return asm_err(a, line, "'%s' is a reserved word", name);
    if (asm_find_const(a, name) || asm_find_global(a, name) >= 0)
        return asm_err(a, line, "'%s' is already declared", name);
    return 0;
}

static int asm_directive1(struct asm_st *a, int line, const char *p)
{
    char dir[IV_NAME_MAX], name[IV_NAME_MAX], kind[IV_NAME_MAX];
    int r = asm_ident(a, line, &p, dir);
    if (r <= 0)
        return r < 0 ? -1 : asm_err(a, line, "expected a directive name after '.'");
    if (strcmp(dir, "expect") == 0)
        return 0;                                   /* pass 2 */
    if (strcmp(dir, "const") == 0) {
        p = asm_skip(p);
        r = asm_ident(a, line, &p, name);
        if (r <= 0)
            return r < 0 ? -1 : asm_err(a, line, "expected a name after .const");
        if (asm_new_name(a, line, name) < 0)
            return -1;
        if (a->nconsts >= IV_MAX_CONSTS)
            return asm_err(a, line, "too many constants (max %d)", IV_MAX_CONSTS);
        p = asm_skip(p);
        if (*p != '=')
            return asm_err(a, line, "expected '=' after .const %s", name);
        p++;
        int64_t v;
        if (asm_const_expr(a, line, &p, &v) < 0)
            return -1;
        p = asm_skip(p);
        if (*p)
            return asm_junk(a, line, p, ".const");
        struct asm_const *k = &a->consts[a->nconsts++];
        memcpy(k->name, name, sizeof name);
        k->v = v;
        return 0;
    }
    bool pt = strcmp(dir, "per_thread") == 0;
    if (!pt && strcmp(dir, "global") != 0)
        return asm_err(a, line, "unknown directive '.%s' (known: .global, .per_thread, "
                       ".const, .expect)", dir);
    p = asm_skip(p);
    r = asm_ident(a, line, &p, kind);
    if (r < 0)
        return -1;
    int k = r == 0 ? -1 : strcmp(kind, "int") == 0 ? IV_KIND_INT
                        : strcmp(kind, "list") == 0 ? IV_KIND_LIST
                        : strcmp(kind, "dict") == 0 ? IV_KIND_DICT : -1;
    if (k < 0)
        return asm_err(a, line, "expected int, list or dict after .%s", dir);
    p = asm_skip(p);
    r = asm_ident(a, line, &p, name);
    if (r <= 0)
        return r < 0 ? -1 : asm_err(a, line, "expected a name after .%s %s", dir, kind);
    if (asm_new_name(a, line, name) < 0)
        return -1;
    if (a->prog->nglobals >= IV_MAX_GLOBALS)
        return asm_err(a, line, "too many objects (max %d)", IV_MAX_GLOBALS);
    int64_t init = 0;
    p = asm_skip(p);
    if (*p == '=') {
        if (k != IV_KIND_INT)
            return asm_err(a, line, "only an int takes an initial value");
        p++;
        if (asm_const_expr(a, line, &p, &init) < 0)
            return -1;
        p = asm_skip(p);
    }
    if (*p)
        return asm_junk(a, line, p, name);
    struct iv_global *g = &a->prog->globals[a->prog->nglobals++];
    memcpy(g->name, name, sizeof name);
    g->kind = (uint8_t)k;
    g->per_thread = pt;
    g->init = init;
    g->line = line;
    return 0;
}

/* Skips leading `label:` definitions; in pass 1 records them. Returns the rest. */
static int asm_labels(struct asm_st *a, int line, const char **pp, int pass)
{
    for (;;) {
        const char *p = asm_skip(*pp);
        char name[IV_NAME_MAX];
        const char *q = p;
        int r = asm_ident(a, line, &q, name);
        if (r < 0)
            return -1;
        if (r == 0 || *q != ':') {
            *pp = p;
            return 0;
        }
        if (pass == 1) {
            const struct asm_label *old = asm_find_label(a, name);
            if (old)
                return asm_err(a, line, "label '%s' already defined at line %d", name,
                               old->line);
            if (a->nlabels == a->caplabels) {
                int cap = a->caplabels ? 2 * a->caplabels : 32;
                struct asm_label *nl = realloc(a->labels, (size_t)cap * sizeof *nl);
                if (!nl)
                    return asm_err(a, line, "out of memory");
                a->labels = nl;
                a->caplabels = cap;
            }
            struct asm_label *l = &a->labels[a->nlabels++];
            memcpy(l->name, name, sizeof name);
            l->idx = a->ninsn;
            l->line = line;
        }
        *pp = q + 1;
    }
}

static int asm_line1(struct asm_st *a, int line, const char *p)
{
    p = asm_skip(p);
    if (*p == '.')
        return asm_directive1(a, line, p + 1);
    if (asm_labels(a, line, &p, 1) < 0)
        return -1;
    if (!*p)
        return 0;
    if (a->ninsn >= IV_MAX_CODE)
        return asm_err(a, line, "too many instructions (max %d)", IV_MAX_CODE);
    a->ninsn++;
    return 0;
}

/* ---- pass 2: instructions and expectations ---- */

static int asm_opcode(const char *w)
{
    for (int op = 0; op < IV_NOPS; op++)
        if (strcasecmp(asm_op_names[op], w) == 0)
            return op;
    return -1;
}

static int asm_small_int(struct asm_st *a, int line, const char **pp, const char *what,
                         int lo, int hi, int *out)
{
    const char *p = asm_skip(*pp);
    if (!(*p >= '0' && *p <= '9'))
        return asm_err(a, line, "expected %s (a number %d..%d), found '%.20s'", what, lo, hi, p);
    long v = 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (*p - '0');
        if (v > hi)
            return asm_err(a, line, "%s out of range (allowed %d..%d)", what, lo, hi);
        p++;
    }
    if (asm_ident_char(*p))
        return asm_err(a, line, "bad %s '%.20s'", what, *pp);
    if (v < lo)
        return asm_err(a, line, "%s out of range (allowed %d..%d)", what, lo, hi);
    *out = (int)v;
    *pp = p;
    return 0;
}

static int asm_label_operand(struct asm_st *a, int line, const char **pp, const char *opn,
                             int *target)
{
    char name[IV_NAME_MAX];
    *pp = asm_skip(*pp);
    int r = asm_ident(a, line, pp, name);
    if (r <= 0)
        return r < 0 ? -1 : asm_err(a, line, "%s needs a label, found '%.20s'", opn, *pp);
    const struct asm_label *l = asm_find_label(a, name);
    if (!l)
        return asm_err(a, line, "%s to unknown label '%s'", opn, name);
    if (l->idx >= a->prog->ncode)
        return asm_err(a, line, "%s to label '%s' (line %d) out of range: no instruction "
                       "follows it", opn, name, l->line);
    *target = l->idx;
    return 0;
}

static int asm_insn(struct asm_st *a, int line, const char *p)
{
    char w[IV_NAME_MAX];
    const char *start = p;
    int r = asm_ident(a, line, &p, w);
    if (r < 0)
        return -1;
    int op = r ? asm_opcode(w) : -1;
    if (op < 0 || (*p && !asm_space(*p)))
        return asm_err(a, line, "unknown opcode '%.*s'", (int)strcspn(start, " \t\r\v\f"),
                       start);
    struct iv_insn *in = &a->prog->code[a->ninsn];
    memset(in, 0, sizeof *in);
    in->op = (uint8_t)op;
    const char *opn = asm_op_names[op];
    enum asm_shape sh = asm_shape(op);
    bool objects = a->prog->params.memory != IV_MEM_RAW;
    if (asm_obj_op(op) && !objects)
        return asm_err(a, line, "%s needs the object model: run with --memory tracing, "
                       "refcount, biased or buffered (it is raw)", opn);
    char name[IV_NAME_MAX];
    int v;
    switch (sh) {
    case SH_NONE:
        break;
    case SH_CONST:
        p = asm_skip(p);
        if (!*p)
            return asm_err(a, line, "PUSH needs a value");
        if (asm_const_expr(a, line, &p, &in->v) < 0)
            return -1;
        break;
    case SH_INT: case SH_LIST: case SH_DICT: {
        p = asm_skip(p);
        r = asm_ident(a, line, &p, name);
        if (r <= 0)
            return r < 0 ? -1 : asm_err(a, line, "%s needs an object name, found '%.20s'", opn, p);
        int g = asm_find_global(a, name);
        if (g < 0)
            return asm_err(a, line, "%s of undeclared object '%s' (declare it with .global "
                           "or .per_thread)", opn, name);
        int want = sh == SH_INT ? IV_KIND_INT : sh == SH_LIST ? IV_KIND_LIST : IV_KIND_DICT;
        static const char *const kn[] = { "int", "list", "dict" };
        /* with objects, LOAD_GLOBAL of a list or dict pushes a reference to it */
        bool any = objects && op == IV_LOAD_GLOBAL;
        if (a->prog->globals[g].kind != want && !any)
            return asm_err(a, line, "%s needs %s %s, but '%s' is %s %s%s", opn,
                           want == IV_KIND_INT ? "an" : "a", kn[want], name,
                           a->prog->globals[g].kind == IV_KIND_INT ? "an" : "a",
                           kn[a->prog->globals[g].kind],
                           op == IV_LOAD_GLOBAL ? " (LOAD_GLOBAL of a list or dict, a reference "
                                                  "to it, needs --memory other than raw)" : "");
        in->a = g;
        break;
    }
    case SH_LOCAL:
        if (asm_small_int(a, line, &p, "local index", 0, IV_LOCALS_MAX - 1, &v) < 0)
            return -1;
        in->a = v;
        break;
    case SH_LABEL:
        if (asm_label_operand(a, line, &p, opn, &in->a) < 0)
            return -1;
        break;
    case SH_CALL:
        if (asm_label_operand(a, line, &p, opn, &in->a) < 0)
            return -1;
        if (asm_small_int(a, line, &p, "argument count", 0, IV_LOCALS_MAX, &v) < 0)
            return -1;
        in->b = (int16_t)v;
        break;
    }
    p = asm_skip(p);
    if (*p)
        return asm_junk(a, line, p, opn);
    a->prog->line[a->ninsn++] = line;
    return 0;
}

static int asm_expect(struct asm_st *a, int line, const char *p)
{
    struct iv_program *pr = a->prog;
    if (pr->nexpects >= IV_MAX_EXPECTS)
        return asm_err(a, line, "too many .expect lines (max %d)", IV_MAX_EXPECTS);
    struct iv_expect *ex = &pr->expects[pr->nexpects];
    memset(ex, 0, sizeof *ex);
    p = asm_skip(p);
    snprintf(ex->text, sizeof ex->text, "%s", p);
    size_t tl = strlen(ex->text);
    while (tl > 0 && asm_space(ex->text[tl - 1]))
        ex->text[--tl] = 0;
    if (!*p)
        return asm_err(a, line, ".expect needs 'EXPRESSION = EXPRESSION'");
    struct asm_xp x = { .a = a, .p = p, .line = line, .e = &ex->lhs, .expect = true };
    if (xp_expr(&x) < 0)
        return -1;
    x.p = asm_skip(x.p);
    if (*x.p != '=')
        return asm_err(a, line, ".expect needs 'EXPRESSION = EXPRESSION', found '%.20s'", x.p);
    x.p++;
    x.e = &ex->rhs;
    if (xp_expr(&x) < 0)
        return -1;
    x.p = asm_skip(x.p);
    if (*x.p)
        return asm_junk(a, line, x.p, ".expect expression");
    ex->per_thread = x.per_thread;
    ex->line = line;
    pr->nexpects++;
    return 0;
}

static int asm_line2(struct asm_st *a, int line, const char *p)
{
    p = asm_skip(p);
    if (*p == '.') {
        p++;
        char dir[IV_NAME_MAX];
        if (asm_ident(a, line, &p, dir) <= 0 || strcmp(dir, "expect") != 0)
            return 0;                               /* done in pass 1 */
        return asm_expect(a, line, p);
    }
    if (asm_labels(a, line, &p, 2) < 0)
        return -1;
    if (!*p)
        return 0;
    return asm_insn(a, line, p);
}

/* Runs fn over every line, with the comment cut off. */
static int asm_lines(struct asm_st *a, int (*fn)(struct asm_st *, int, const char *))
{
    char buf[IV_LINE_MAX + 1];
    size_t pos = 0;
    int line = 0;
    while (pos < a->len) {
        line++;
        size_t e = pos;
        while (e < a->len && a->text[e] != '\n')
            e++;
        size_t n = e - pos;
        if (n > IV_LINE_MAX)
            return asm_err(a, line, "line longer than %d characters", IV_LINE_MAX);
        memcpy(buf, a->text + pos, n);
        buf[n] = 0;
        char *h = strchr(buf, '#');
        if (h)
            *h = 0;
        if (fn(a, line, buf) < 0)
            return -1;
        pos = e + 1;
    }
    return 0;
}

/* ---- static analysis ---- */

struct asm_edge {
    int callee;               /* context index */
    int line;                 /* of the CALL */
};

struct asm_ctx {
    int entry, nargs, nlocals, maxdepth;
    struct asm_edge *calls;
    int ncalls, capcalls;
    uint64_t mask;            /* objects touched, callees included (after asm_graph) */
    int need, frames;         /* stack slots and call depth, callees included */
    int state;                /* 0 new, 1 on the DFS path, 2 done */
};

struct asm_an {
    struct asm_st *a;
    int16_t *depth;           /* operand-stack depth before the instruction; -1 unseen */
    int16_t *adepth;          /* atomic-section depth before it (relative to its frame) */
    int *ctxof;               /* context of the instruction; -1 unseen */
    int *work;
    int nwork;
    struct asm_ctx *ctx;
    int nctx;
    int *ctx_at;              /* instruction index -> context starting there, or -1 */
};

static uint64_t asm_obj_bit(const struct iv_insn *in)
{
    switch (asm_shape(in->op)) {
    case SH_INT: case SH_LIST: case SH_DICT: return 1ull << in->a;
    default: return 0;
    }
}

static int an_reach(struct asm_an *an, int from, int to, int d, int ad, int ci)
{
    struct asm_st *a = an->a;
    const int *ln = a->prog->line;
    if (to >= a->prog->ncode)
        return asm_err(a, ln[from], "execution runs past the last instruction (end the "
                       "program with HALT, RET or JUMP)");
    if (an->ctxof[to] < 0) {
        an->ctxof[to] = ci;
        an->depth[to] = (int16_t)d;
        an->adepth[to] = (int16_t)ad;
        an->work[an->nwork++] = to;
        return 0;
    }
    if (an->ctxof[to] != ci)
        return asm_err(a, ln[to], "instruction reached both from %s and from %s: jumps "
                       "between functions are not allowed",
                       an->ctxof[to] == 0 ? "the main program" : "one function",
                       ci == 0 ? "the main program" : "another function");
    if (an->depth[to] != d)
        return asm_err(a, ln[to], "stack depth differs between paths to this instruction "
                       "(%d vs %d)", an->depth[to], d);
    if (an->adepth[to] != ad)
        return asm_err(a, ln[to], "unbalanced ATOMIC_BEGIN/ATOMIC_END: atomic depth differs "
                       "between paths to this instruction (%d vs %d)", an->adepth[to], ad);
    return 0;
}

static int an_context(struct asm_an *an, int entry, int nargs, int line)
{
    struct asm_st *a = an->a;
    int c = an->ctx_at[entry];
    if (c >= 0) {
        if (an->ctx[c].nargs != nargs)
            return asm_err(a, line, "CALL with %d arguments, but the same function is "
                           "called with %d elsewhere", nargs, an->ctx[c].nargs);
        return c;
    }
    if (an->nctx > IV_MAX_FUNCS)
        return asm_err(a, line, "too many functions (max %d)", IV_MAX_FUNCS);
    c = an->nctx++;
    memset(&an->ctx[c], 0, sizeof an->ctx[c]);
    an->ctx[c].entry = entry;
    an->ctx[c].nargs = nargs;
    an->ctx[c].nlocals = nargs;
    an->ctx_at[entry] = c;
    return c;
}

static int an_add_call(struct asm_an *an, int ci, int callee, int line)
{
    struct asm_ctx *c = &an->ctx[ci];
    if (c->ncalls == c->capcalls) {
        int cap = c->capcalls ? 2 * c->capcalls : 8;
        struct asm_edge *e = realloc(c->calls, (size_t)cap * sizeof *e);
        if (!e)
            return asm_err(an->a, line, "out of memory");
        c->calls = e;
        c->capcalls = cap;
    }
    c->calls[c->ncalls].callee = callee;
    c->calls[c->ncalls].line = line;
    c->ncalls++;
    return 0;
}

/* Walks one context from its entry. */
static int an_walk(struct asm_an *an, int ci, bool *found_halt)
{
    struct asm_st *a = an->a;
    struct iv_program *pr = a->prog;
    int entry = an->ctx[ci].entry;
    if (an_reach(an, entry, entry, 0, 0, ci) < 0)
        return -1;
    while (an->nwork > 0) {
        int i = an->work[--an->nwork];
        struct iv_insn *in = &pr->code[i];
        int line = pr->line[i];
        int d = an->depth[i], ad = an->adepth[i];
        int need = 0, push = 0;
        bool falls = true;
        int jump = -1;
        switch (in->op) {
        case IV_PUSH: case IV_LOAD_GLOBAL: case IV_LOAD_LOCAL: case IV_LIST_LEN:
        case IV_DICT_LEN: case IV_THREAD_ID: case IV_NEW_LIST: case IV_NEW_DICT:
        case IV_LIST_POP:
            push = 1; break;
        case IV_LEN: case IV_POPITEM: need = 1; push = 1; break;
        case IV_GETITEM: case IV_CONTAINS: need = 2; push = 1; break;
        case IV_APPEND: need = 2; break;
        case IV_SETITEM: need = 3; break;
        case IV_DUP: need = 1; push = 2; break;
        case IV_POP: case IV_STORE_GLOBAL: case IV_STORE_LOCAL: case IV_LIST_APPEND:
            need = 1; break;
        case IV_SWAP: need = 2; push = 2; break;
        case IV_ADD: case IV_SUB: case IV_MUL: case IV_DIV: case IV_MOD: case IV_LT:
        case IV_GT: case IV_EQ:
            need = 2; push = 1; break;
        case IV_NOT: case IV_LIST_GET: case IV_DICT_GET: need = 1; push = 1; break;
        case IV_LIST_SET: case IV_DICT_SET: need = 2; break;
        case IV_JUMP: falls = false; jump = in->a; break;
        case IV_JUMP_IF_FALSE: case IV_JUMP_IF_TRUE: need = 1; jump = in->a; break;
        case IV_CALL: need = in->b; push = 1; break;
        case IV_RET:
            need = 1; falls = false;
            if (ci == 0)
                return asm_err(a, line, "RET outside a function (the main program ends "
                               "with HALT)");
            if (ad > 0)
                return asm_err(a, line, "RET inside an atomic section (unbalanced "
                               "ATOMIC_BEGIN/ATOMIC_END)");
            break;
        case IV_HALT:
            falls = false;
            if (ad > 0)
                return asm_err(a, line, "HALT inside an atomic section (unbalanced "
                               "ATOMIC_BEGIN/ATOMIC_END)");
            *found_halt = true;
            break;
        case IV_ATOMIC_BEGIN:
            if (ad >= IV_STACK_MAX)
                return asm_err(a, line, "atomic sections nested deeper than %d", IV_STACK_MAX);
            break;
        case IV_ATOMIC_END:
            if (ad == 0)
                return asm_err(a, line, "ATOMIC_END without ATOMIC_BEGIN (unbalanced "
                               "ATOMIC_BEGIN/ATOMIC_END)");
            break;
        default: break;
        }
        if (d < need)
            return asm_err(a, line, "stack underflow: %s needs %d value%s, the stack holds "
                           "%d here", asm_op_names[in->op], need, need == 1 ? "" : "s", d);
        int nd = d - need + push;
        if (nd > IV_STACK_MAX)
            return asm_err(a, line, "stack deeper than %d values", IV_STACK_MAX);
        if (nd > an->ctx[ci].maxdepth)
            an->ctx[ci].maxdepth = nd;
        if (in->op == IV_LOAD_LOCAL || in->op == IV_STORE_LOCAL)
            if (in->a + 1 > an->ctx[ci].nlocals)
                an->ctx[ci].nlocals = in->a + 1;
        if (in->op == IV_CALL) {
            int callee = an_context(an, in->a, in->b, line);
            if (callee < 0 || an_add_call(an, ci, callee, line) < 0)
                return -1;
        }
        an->ctx[ci].mask |= asm_obj_bit(in);
        int nad = ad + (in->op == IV_ATOMIC_BEGIN) - (in->op == IV_ATOMIC_END);
        if (jump >= 0 && an_reach(an, i, jump, nd, nad, ci) < 0)
            return -1;
        if (falls && an_reach(an, i, i + 1, nd, nad, ci) < 0)
            return -1;
    }
    return 0;
}

/* Call-graph DFS: rejects recursion, computes need/frames/mask bottom-up. */
static int an_graph(struct asm_an *an, int ci)
{
    struct asm_ctx *c = &an->ctx[ci];
    if (c->state == 2)
        return 0;
    c->state = 1;
    int need = 0, frames = 0;
    for (int k = 0; k < c->ncalls; k++) {
        struct asm_ctx *e = &an->ctx[c->calls[k].callee];
        if (e->state == 1) {
            const char *nm = "?";
            for (int l = 0; l < an->a->nlabels; l++)
                if (an->a->labels[l].idx == e->entry)
                    nm = an->a->labels[l].name;
            return asm_err(an->a, c->calls[k].line, "recursive call to '%s' (recursion is "
                           "not supported)", nm);
        }
        if (an_graph(an, c->calls[k].callee) < 0)
            return -1;
        if (e->need > need)
            need = e->need;
        if (e->frames > frames)
            frames = e->frames;
        c->mask |= e->mask;
    }
    long total = (long)c->nlocals + c->maxdepth + need;
    c->need = total > IV_VALS_MAX + 1 ? IV_VALS_MAX + 1 : (int)total;
    c->frames = frames + 1 > IV_FRAMES_MAX + 1 ? IV_FRAMES_MAX + 1 : frames + 1;
    c->state = 2;
    return 0;
}

/* The objects an ATOMIC_BEGIN's section may touch: everything reachable from it up to
 * the ATOMIC_END that closes it, with the callees' objects. */
static uint64_t an_section(struct asm_an *an, int begin, int *stamp)
{
    struct iv_program *pr = an->a->prog;
    int ad = an->adepth[begin];
    uint64_t mask = 0;
    an->nwork = 0;
    an->work[an->nwork++] = begin + 1;
    stamp[begin + 1] = begin + 1;
    while (an->nwork > 0) {
        int i = an->work[--an->nwork];
        const struct iv_insn *in = &pr->code[i];
        mask |= asm_obj_bit(in);
        if (in->op == IV_CALL)
            mask |= an->ctx[an->ctx_at[in->a]].mask;
        if ((in->op == IV_ATOMIC_END && an->adepth[i] == ad + 1) || in->op == IV_HALT ||
            in->op == IV_RET)
            continue;
        int succ[2], ns = 0;
        if (in->op == IV_JUMP || in->op == IV_JUMP_IF_FALSE || in->op == IV_JUMP_IF_TRUE)
            succ[ns++] = in->a;
        if (in->op != IV_JUMP)
            succ[ns++] = i + 1;
        for (int k = 0; k < ns; k++)
            if (succ[k] < pr->ncode && stamp[succ[k]] != begin + 1) {
                stamp[succ[k]] = begin + 1;
                an->work[an->nwork++] = succ[k];
            }
    }
    return mask;
}

/* ---- types, where the object model is on: what the loader can prove ----
 *
 * The types of the top IV_TT_SLOTS operands before each instruction, a nibble each
 * (slot 0, the top, in the low nibble): TT_ANY where paths disagree or nothing is
 * known (a local, a global's cell, an element, a callee's argument). A fixpoint over
 * the paths the walk found; then every instruction whose operands are known to be of
 * the wrong kind is rejected. The rest is checked by the VM at run time (a fault that
 * names the line). */
enum { TT_ANY, TT_INT, TT_LIST, TT_DICT };
#define IV_TT_SLOTS 4
static const char *const tt_names[] = { "a value", "an int", "a list", "a dict" };

static unsigned tt_slot(unsigned tt, int i) { return (tt >> (4 * i)) & 15u; }
static unsigned tt_pop(unsigned tt, int n) { return n >= IV_TT_SLOTS ? 0 : tt >> (4 * n); }
static unsigned tt_push(unsigned tt, unsigned t) { return ((tt << 4) | t) & 0xFFFFu; }
static unsigned tt_merge(unsigned x, unsigned y)
{
    unsigned r = 0;
    for (int i = 0; i < IV_TT_SLOTS; i++)
        if (tt_slot(x, i) == tt_slot(y, i))
            r |= tt_slot(x, i) << (4 * i);
    return r;
}

/* The types after `in`, from those before it. */
static unsigned tt_step(const struct iv_program *pr, const struct iv_insn *in, unsigned tt)
{
    switch (in->op) {
    case IV_PUSH: case IV_LIST_LEN: case IV_DICT_LEN: case IV_THREAD_ID:
        return tt_push(tt, TT_INT);
    case IV_LOAD_GLOBAL: {
        int k = pr->globals[in->a].kind;
        return tt_push(tt, k == IV_KIND_LIST ? TT_LIST : k == IV_KIND_DICT ? TT_DICT : TT_ANY);
    }
    case IV_LOAD_LOCAL: case IV_LIST_POP: return tt_push(tt, TT_ANY);
    case IV_NEW_LIST: return tt_push(tt, TT_LIST);
    case IV_NEW_DICT: return tt_push(tt, TT_DICT);
    case IV_DUP: return tt_push(tt, tt_slot(tt, 0));
    case IV_SWAP:
        return (tt & ~0xFFu) | (tt_slot(tt, 0) << 4) | tt_slot(tt, 1);
    case IV_POP: case IV_STORE_GLOBAL: case IV_STORE_LOCAL: case IV_LIST_APPEND:
    case IV_JUMP_IF_FALSE: case IV_JUMP_IF_TRUE: case IV_RET:
        return tt_pop(tt, 1);
    case IV_ADD: case IV_SUB: case IV_MUL: case IV_DIV: case IV_MOD: case IV_LT: case IV_GT:
    case IV_EQ: case IV_CONTAINS:
        return tt_push(tt_pop(tt, 2), TT_INT);
    case IV_NOT: case IV_LEN: return tt_push(tt_pop(tt, 1), TT_INT);
    case IV_LIST_GET: case IV_DICT_GET: case IV_POPITEM:
        return tt_push(tt_pop(tt, 1), TT_ANY);
    case IV_GETITEM: return tt_push(tt_pop(tt, 2), TT_ANY);
    case IV_LIST_SET: case IV_DICT_SET: case IV_APPEND: return tt_pop(tt, 2);
    case IV_SETITEM: return tt_pop(tt, 3);
    case IV_CALL: return tt_push(tt_pop(tt, in->b), TT_ANY);
    default: return tt;
    }
}

/* What `in` needs of operand slot i: a mask of allowed types (0: anything). */
static unsigned tt_need(const struct iv_insn *in, int i)
{
    const unsigned I = 1u << TT_INT, L = 1u << TT_LIST, C = L | (1u << TT_DICT);
    switch (in->op) {
    case IV_ADD: case IV_SUB: case IV_MUL: case IV_DIV: case IV_MOD: case IV_LT: case IV_GT:
        return i < 2 ? I : 0;
    case IV_LIST_GET: case IV_DICT_GET: return i == 0 ? I : 0;
    case IV_LIST_SET: case IV_DICT_SET: return i == 1 ? I : 0;
    case IV_APPEND: return i == 1 ? L : 0;
    case IV_GETITEM: case IV_CONTAINS: return i == 0 ? I : i == 1 ? C : 0;
    case IV_SETITEM: return i == 1 ? I : i == 2 ? C : 0;
    case IV_LEN: return i == 0 ? C : 0;
    case IV_POPITEM: return i == 0 ? L : 0;
    default: return 0;
    }
}

static int an_types(struct asm_an *an)
{
    struct asm_st *a = an->a;
    struct iv_program *pr = a->prog;
    int n = pr->ncode, rc = -1;
    uint16_t *tt = calloc((size_t)n, sizeof *tt);
    bool *seen = calloc((size_t)n, sizeof *seen), *queued = calloc((size_t)n, sizeof *queued);
    int *work = malloc((size_t)n * sizeof *work), nwork = 0;
    if (!tt || !seen || !queued || !work) {
        asm_err(a, 0, "out of memory");
        goto out;
    }
    for (int ci = 0; ci < an->nctx; ci++) {
        int e = an->ctx[ci].entry;
        seen[e] = queued[e] = true;
        work[nwork++] = e;
    }
    while (nwork > 0) {
        int i = work[--nwork];
        queued[i] = false;
        const struct iv_insn *in = &pr->code[i];
        unsigned out = tt_step(pr, in, tt[i]);
        int succ[2], ns = 0;
        if (in->op == IV_JUMP || in->op == IV_JUMP_IF_FALSE || in->op == IV_JUMP_IF_TRUE)
            succ[ns++] = in->a;
        if (in->op != IV_JUMP && in->op != IV_RET && in->op != IV_HALT && i + 1 < n)
            succ[ns++] = i + 1;
        for (int k = 0; k < ns; k++) {
            int j = succ[k];
            unsigned m = seen[j] ? tt_merge(tt[j], out) : out;
            if (seen[j] && m == tt[j])
                continue;
            seen[j] = true;
            tt[j] = (uint16_t)m;
            if (!queued[j]) {
                queued[j] = true;
                work[nwork++] = j;
            }
        }
    }
    for (int i = 0; i < n; i++) {
        if (!seen[i])
            continue;
        for (int s = 0; s < IV_TT_SLOTS; s++) {
            unsigned need = tt_need(&pr->code[i], s), t = tt_slot(tt[i], s);
            if (need && t != TT_ANY && !(need & (1u << t))) {
                asm_err(a, pr->line[i], "%s needs %s %s, but it is %s here", asm_op_names[pr->code[i].op],
                        need == (1u << TT_INT) ? "an int" : need == (1u << TT_LIST) ? "a list"
                                                                     : "a list or a dict",
                        s == 0 ? "on top of the stack" : s == 1 ? "below the top" : "third from the top",
                        tt_names[t]);
                goto out;
            }
        }
    }
    rc = 0;
out:
    free(tt);
    free(seen);
    free(queued);
    free(work);
    return rc;
}

static int asm_analyse(struct asm_st *a)
{
    struct iv_program *pr = a->prog;
    int n = pr->ncode;
    struct asm_an an = { .a = a };
    int rc = -1;
    an.depth = malloc((size_t)n * sizeof *an.depth);
    an.adepth = malloc((size_t)n * sizeof *an.adepth);
    an.ctxof = malloc((size_t)n * sizeof *an.ctxof);
    an.work = malloc((size_t)(n + 1) * sizeof *an.work);
    an.ctx_at = malloc((size_t)n * sizeof *an.ctx_at);
    an.ctx = calloc(IV_MAX_FUNCS + 2, sizeof *an.ctx);
    if (!an.depth || !an.adepth || !an.ctxof || !an.work || !an.ctx_at || !an.ctx) {
        asm_err(a, 0, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        an.ctxof[i] = -1;
        an.ctx_at[i] = -1;
    }
    bool found_halt = false;
    if (an_context(&an, 0, 0, pr->line[0]) < 0)
        goto out;
    for (int ci = 0; ci < an.nctx; ci++)
        if (an_walk(&an, ci, &found_halt) < 0)
            goto out;
    if (!found_halt) {
        asm_err(a, 0, "the program never reaches HALT");
        goto out;
    }
    if (pr->params.memory != IV_MEM_RAW && an_types(&an) < 0)
        goto out;
    for (int ci = 0; ci < an.nctx; ci++)
        if (an_graph(&an, ci) < 0)
            goto out;
    pr->main_nlocals = an.ctx[0].nlocals;
    pr->max_vals = an.ctx[0].need;
    pr->max_frames = an.ctx[0].frames;
    if (pr->max_vals > IV_VALS_MAX) {
        asm_err(a, 0, "the program needs more than %d stack slots (locals and operands "
                "of the deepest call chain)", IV_VALS_MAX);
        goto out;
    }
    if (pr->max_frames > IV_FRAMES_MAX) {
        asm_err(a, 0, "calls nested deeper than %d", IV_FRAMES_MAX);
        goto out;
    }
    for (int i = 0; i < n; i++) {
        if (an.ctxof[i] < 0)
            continue;                            /* unreachable: never runs */
        if (pr->code[i].op == IV_CALL)
            pr->code[i].v = an.ctx[an.ctx_at[pr->code[i].a]].nlocals;
    }
    /* the stamps reuse ctxof's memory: reachability is not needed any more, except to
       skip unreachable BEGINs, which we record first in depth[] (-1 = unreachable) */
    for (int i = 0; i < n; i++)
        if (an.ctxof[i] < 0)
            an.depth[i] = -1;
    int *stamp = an.ctxof;
    for (int i = 0; i < n; i++)
        stamp[i] = 0;
    for (int i = 0; i < n; i++)
        if (pr->code[i].op == IV_ATOMIC_BEGIN && an.depth[i] >= 0)
            pr->atomic_set[i] = an_section(&an, i, stamp);
    rc = 0;
out:
    if (an.ctx)
        for (int ci = 0; ci < an.nctx; ci++)
            free(an.ctx[ci].calls);
    free(an.depth);
    free(an.adepth);
    free(an.ctxof);
    free(an.work);
    free(an.ctx_at);
    free(an.ctx);
    return rc;
}

/* ---- functions, for conflict analysis's locations ---- */

/* prog->funcs: "main" at instruction 0 and every CALL target with its first label,
 * by increasing pc. */
static int asm_funcs(struct asm_st *a)
{
    struct iv_program *pr = a->prog;
    char *target = calloc((size_t)pr->ncode, 1);
    if (!target)
        return asm_err(a, 0, "out of memory");
    target[0] = 1;
    int n = 1;
    for (int i = 0; i < pr->ncode; i++)
        if (pr->code[i].op == IV_CALL && !target[pr->code[i].a]) {
            target[pr->code[i].a] = 1;
            n++;
        }
    pr->funcs = calloc((size_t)n, sizeof *pr->funcs);
    if (!pr->funcs) {
        free(target);
        return asm_err(a, 0, "out of memory");
    }
    for (int i = 0, k = 0; i < pr->ncode && k < n; i++) {
        if (!target[i])
            continue;
        struct iv_func *f = &pr->funcs[k++];
        f->pc = i;
        snprintf(f->name, sizeof f->name, "%s", "main");
        for (int l = 0; i > 0 && l < a->nlabels; l++)
            if (a->labels[l].idx == i) {      /* the first label naming it */
                memcpy(f->name, a->labels[l].name, sizeof f->name);
                break;
            }
        pr->nfuncs = k;
    }
    free(target);
    return 0;
}

const char *iv_func_of(const struct iv_program *prog, int idx)
{
    int lo = 0, hi = prog->nfuncs - 1;    /* the last func with pc <= idx */
    if (hi < 0)
        return "main";
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (prog->funcs[mid].pc <= idx)
            lo = mid;
        else
            hi = mid - 1;
    }
    return prog->funcs[lo].name;
}

/* ---- entry points ---- */

void iv_program_free(struct iv_program *prog)
{
    if (!prog)
        return;
    free(prog->code);
    free(prog->line);
    free(prog->funcs);
    free(prog->atomic_set);
    free(prog);
}

int iv_asm_parse(const char *text, size_t len, const char *src, const struct iv_params *p,
                 struct iv_program **out, char *err, size_t errlen)
{
    struct asm_st a = { .text = text, .len = len, .src = src ? src : "program",
                        .err = err, .errlen = errlen };
    *out = NULL;
    if (len == 0)
        return asm_err(&a, 0, "empty program (0 bytes)");
    if (len > IV_MAX_FILE)
        return asm_err(&a, 0, "program too large (%zu bytes, max %d)", len, IV_MAX_FILE);
    int line = 1;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\n')
            line++;
        else if (c < 0x20 && c != '\t' && c != '\r' && c != '\v' && c != '\f')
            return asm_err(&a, line, "binary data (byte 0x%02x), not a program text", c);
        else if (c == 0x7f)
            return asm_err(&a, line, "binary data (byte 0x7f), not a program text");
    }
    struct iv_program *pr = calloc(1, sizeof *pr);
    if (!pr)
        return asm_err(&a, 0, "out of memory");
    a.prog = pr;
    pr->params = *p;
    snprintf(pr->name, sizeof pr->name, "%s", a.src);
    int rc = -1;
    if (asm_lines(&a, asm_line1) < 0)
        goto out;
    if (a.ninsn == 0) {
        asm_err(&a, 0, "no instructions");
        goto out;
    }
    pr->ncode = a.ninsn;
    pr->code = calloc((size_t)pr->ncode, sizeof *pr->code);
    pr->line = calloc((size_t)pr->ncode, sizeof *pr->line);
    pr->atomic_set = calloc((size_t)pr->ncode, sizeof *pr->atomic_set);
    if (!pr->code || !pr->line || !pr->atomic_set) {
        asm_err(&a, 0, "out of memory");
        goto out;
    }
    a.ninsn = 0;
    if (asm_lines(&a, asm_line2) < 0)
        goto out;
    if (pr->nexpects == 0) {
        asm_err(&a, 0, "no .expect line: a program must declare its expected final state");
        goto out;
    }
    if (asm_analyse(&a) < 0)
        goto out;
    if (asm_funcs(&a) < 0)
        goto out;
    rc = 0;
out:
    free(a.labels);
    if (rc < 0)
        iv_program_free(pr);
    else
        *out = pr;
    return rc;
}

int iv_asm_load(const char *spec, const struct iv_params *p, struct iv_program **out,
                char *err, size_t errlen)
{
    *out = NULL;
    const char *txt = iv_builtin_text(spec);
    if (txt)
        return iv_asm_parse(txt, strlen(txt), spec, p, out, err, errlen);
    char names[256] = "";
    for (int i = 0; iv_builtin_names[i]; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                 i ? ", " : "", iv_builtin_names[i]);
    int fd = open(spec, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "program '%s': %s (and it is not a built-in program: %s)",
                 spec, strerror(errno), names);
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "program '%s': not a regular file", spec);
        close(fd);
        return -1;
    }
    if (st.st_size > IV_MAX_FILE) {
        snprintf(err, errlen, "program '%s': too large (%lld bytes, max %d)", spec,
                 (long long)st.st_size, IV_MAX_FILE);
        close(fd);
        return -1;
    }
    size_t cap = (size_t)st.st_size + 1, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        snprintf(err, errlen, "program '%s': out of memory", spec);
        close(fd);
        return -1;
    }
    for (;;) {
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(err, errlen, "program '%s': read failed: %s", spec, strerror(errno));
            free(buf);
            close(fd);
            return -1;
        }
        if (r == 0)
            break;
        len += (size_t)r;
        if (len == cap) {               /* the file grew: at most one byte past the limit */
            if (len > IV_MAX_FILE)
                break;
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                snprintf(err, errlen, "program '%s': out of memory", spec);
                free(buf);
                close(fd);
                return -1;
            }
            buf = nb;
            cap *= 2;
        }
    }
    close(fd);
    int rc = iv_asm_parse(buf, len, spec, p, out, err, errlen);
    free(buf);
    return rc;
}
