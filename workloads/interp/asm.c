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
#include "workloads/interp/asm_internal.h"

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
    [IV_QUEUE_PUT] = "QUEUE_PUT", [IV_QUEUE_GET] = "QUEUE_GET",
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
enum asm_shape asm_shape(int op)
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
    case IV_QUEUE_PUT: case IV_QUEUE_GET: return SH_QUEUE;
    default: return SH_NONE;
    }
}




int asm_err(struct asm_st *a, int line, const char *fmt, ...)
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
const char *asm_skip(const char *p)
{
    while (asm_space(*p))
        p++;
    return p;
}
static bool asm_ident_start(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
bool asm_ident_char(char c)
{
    return asm_ident_start(c) || (c >= '0' && c <= '9');
}

/* Reads an identifier at *pp into out. 1 read, 0 none there, -1 too long (message). */
int asm_ident(struct asm_st *a, int line, const char **pp, char out[IV_NAME_MAX])
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

const struct asm_const *asm_find_const(const struct asm_st *a, const char *name)
{
    for (int i = 0; i < a->nconsts; i++)
        if (strcmp(a->consts[i].name, name) == 0)
            return &a->consts[i];
    return NULL;
}
int asm_find_global(const struct asm_st *a, const char *name)
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
                        : strcmp(kind, "dict") == 0 ? IV_KIND_DICT
                        : strcmp(kind, "queue") == 0 ? IV_KIND_QUEUE
                        : strcmp(kind, "stmdict") == 0 ? IV_KIND_DICT : -1;
    bool per_entry = r != 0 && strcmp(kind, "stmdict") == 0;
    if (k < 0)
        return asm_err(a, line, "expected int, list, dict, stmdict or queue after .%s", dir);
    if (per_entry && pt)
        return asm_err(a, line, "a stmdict is shared: declare it with .global");
    if (per_entry && a->prog->params.memory == IV_MEM_RAW)
        return asm_err(a, line, "a stmdict holds values of the object model: it needs "
                       "--memory other than raw");
    if (k == IV_KIND_QUEUE && pt)
        return asm_err(a, line, "a queue is shared: declare it with .global");
    if (k == IV_KIND_QUEUE && a->prog->params.memory == IV_MEM_RAW)
        return asm_err(a, line, "a queue holds values of the object model: it needs "
                       "--memory other than raw");
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
    g->per_entry = per_entry;
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
    case SH_INT: case SH_LIST: case SH_DICT: case SH_QUEUE: {
        p = asm_skip(p);
        r = asm_ident(a, line, &p, name);
        if (r <= 0)
            return r < 0 ? -1 : asm_err(a, line, "%s needs an object name, found '%.20s'", opn, p);
        int g = asm_find_global(a, name);
        if (g < 0)
            return asm_err(a, line, "%s of undeclared object '%s' (declare it with .global "
                           "or .per_thread)", opn, name);
        int want = sh == SH_INT ? IV_KIND_INT : sh == SH_LIST ? IV_KIND_LIST
                 : sh == SH_DICT ? IV_KIND_DICT : IV_KIND_QUEUE;
        static const char *const kn[] = { "int", "list", "dict", "queue" };
        /* with objects, LOAD_GLOBAL of a list or dict pushes a reference to it; a
         * queue is named only by QUEUE_PUT and QUEUE_GET */
        bool any = objects && op == IV_LOAD_GLOBAL &&
                   a->prog->globals[g].kind != IV_KIND_QUEUE;
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
