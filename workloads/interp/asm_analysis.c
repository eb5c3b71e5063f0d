/*
 * workloads/interp/asm_analysis.c - the loader's static analysis, after pass 2 (asm.c's
 * header says what it proves): stack and atomic-section depths on every path, the
 * acyclic call graph, each atomic section's set of objects, the types the object
 * model's instructions need, and each instruction's function.
 */
#include "workloads/interp/asm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    case SH_INT: case SH_LIST: case SH_DICT: case SH_QUEUE: return 1ull << in->a;
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
        case IV_LIST_POP: case IV_QUEUE_GET:
            push = 1; break;
        case IV_LEN: case IV_POPITEM: need = 1; push = 1; break;
        case IV_GETITEM: case IV_CONTAINS: need = 2; push = 1; break;
        case IV_APPEND: need = 2; break;
        case IV_SETITEM: need = 3; break;
        case IV_DUP: need = 1; push = 2; break;
        case IV_POP: case IV_STORE_GLOBAL: case IV_STORE_LOCAL: case IV_LIST_APPEND:
        case IV_QUEUE_PUT:
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
                           "%d here", iv_op_name(in->op), need, need == 1 ? "" : "s", d);
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
    case IV_LOAD_LOCAL: case IV_LIST_POP: case IV_QUEUE_GET: return tt_push(tt, TT_ANY);
    case IV_NEW_LIST: return tt_push(tt, TT_LIST);
    case IV_NEW_DICT: return tt_push(tt, TT_DICT);
    case IV_DUP: return tt_push(tt, tt_slot(tt, 0));
    case IV_SWAP:
        return (tt & ~0xFFu) | (tt_slot(tt, 0) << 4) | tt_slot(tt, 1);
    case IV_POP: case IV_STORE_GLOBAL: case IV_STORE_LOCAL: case IV_LIST_APPEND:
    case IV_QUEUE_PUT: case IV_JUMP_IF_FALSE: case IV_JUMP_IF_TRUE: case IV_RET:
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
                asm_err(a, pr->line[i], "%s needs %s %s, but it is %s here", iv_op_name(pr->code[i].op),
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

int asm_analyse(struct asm_st *a)
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
int asm_funcs(struct asm_st *a)
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

