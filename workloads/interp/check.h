/*
 * workloads/interp/check.h - the check after a run (the program's `.expect` lines,
 * evaluated on the final heap in one block; run-time faults), and conflict analysis's
 * descriptions of a location and an object (struct workload's check, describe_where
 * and describe_object).
 */
#ifndef IV_CHECK_H
#define IV_CHECK_H

#include "workloads/interp/setup.h"

struct iv_check_env {
    const struct iv_ctx *cx;
    int not_int;                     /* object model: an expectation read a list or dict
                                      * where it needs an int (assigned in the block) */
    bool sdict;                      /* the object asked about is a stmdict under stm */
};

/* An element or cell value as the expectations see it: an int, or 0 and not_int. */
static IV_OBJ_TEXT int64_t iv_check_int(struct iv_check_env *ce, iv_val w)
{
    if (iv_vtype(w) == IV_T_INT)
        return (int64_t)w >> 4;
    if (iv_vtype(w) == IV_T_BOX) {
        iv_box_ref b = (iv_box_ref)iv_vref(w);
        SYNC_READ(b);
        return b->value;
    }
    ce->not_int = 1;
    return 0;
}

static IV_OBJ_TEXT int64_t iv_check_model(struct iv_check_env *ce, int what, iv_ref r, int kind,
                              int64_t key)
{
    if (kind == IV_KIND_INT) {
        iv_cell_ref c = (iv_cell_ref)r;
        SYNC_READ(c);
        return iv_check_int(ce, (iv_val)c->value);
    }
    if (kind == IV_KIND_DICT && ce->sdict) {   /* sdict.h */
        iv_sdict_ref d = (iv_sdict_ref)r;
        bool present;
        if (what == IV_E_LEN)
            return iv_sdict_len(d);
        if (what != IV_E_SUM)
            return iv_check_int(ce, iv_sdict_get(d, key, &present));
        int64_t t = 0;
        iv_val e;
        for (int64_t i = 0, n = iv_sdict_nent(d); i < n; i++)
            if (iv_sdict_at(d, i, &e))
                t = iv_add(t, iv_check_int(ce, e));
        return t;
    }
    if (kind == IV_KIND_QUEUE) {             /* from the head: q[0] is the next get's */
        iv_oqueue_ref q = (iv_oqueue_ref)r;
        int64_t n = iv_oqueue_len(q), t = 0;
        if (what == IV_E_LEN)
            return n;
        if (what != IV_E_SUM)
            return iv_check_int(ce, iv_oqueue_at(q, key));
        for (int64_t i = 0; i < n; i++)
            t = iv_add(t, iv_check_int(ce, iv_oqueue_at(q, i)));
        return t;
    }
    iv_olist_ref l = (iv_olist_ref)r;
    iv_odict_ref d = (iv_odict_ref)r;
    bool list = kind == IV_KIND_LIST;
    switch (what) {
    case IV_E_LEN:
        return list ? iv_olist_len(l) : iv_odict_len(d);
    case IV_E_SUM: {
        int64_t t = 0;
        if (list) {
            for (int64_t i = 0, n = iv_olist_len(l); i < n; i++)
                t = iv_add(t, iv_check_int(ce, iv_olist_get(l, i)));
        } else {
            SYNC_READ(d);
            iv_slots_ref s = d->slots;
            SYNC_READ(s);
            for (int64_t j = 0; j < d->cap; j++)
                if (s->e[j].used)
                    t = iv_add(t, iv_check_int(ce, (iv_val)s->e[j].val));
        }
        return t;
    }
    default:
        return iv_check_int(ce, list ? iv_olist_get(l, key) : iv_odict_get(d, key));
    }
}

static int64_t iv_check_obj(void *u, int what, int g, int64_t tid, int64_t key)
{
    const struct iv_ctx *cx = ((struct iv_check_env *)u)->cx;
    iv_ref r = iv_obj_of(cx, g, (int)tid);
    int kind = cx->prog->globals[g].kind;
    if (cx->memory != IV_MEM_RAW) {
        ((struct iv_check_env *)u)->sdict = iv_global_type(&cx->prog->globals[g]) == IV_T_SDICT;
        return iv_check_model(u, what, r, kind, key);
    }
    switch (what) {
    case IV_E_GVAL: {
        iv_cell_ref c = (iv_cell_ref)r;
        SYNC_READ(c);
        return c->value;
    }
    case IV_E_LEN:
        return kind == IV_KIND_LIST ? iv_list_len((iv_list_ref)r) : iv_dict_len((iv_dict_ref)r);
    case IV_E_SUM:
        return kind == IV_KIND_LIST ? iv_list_sum((iv_list_ref)r) : iv_dict_sum((iv_dict_ref)r);
    default:
        return kind == IV_KIND_LIST ? iv_list_get((iv_list_ref)r, key)
                                    : iv_dict_get((iv_dict_ref)r, key);
    }
}

static const char *iv_fault_name(int k)
{
    switch (k) {
    case IV_FAULT_LIST_FULL: return "list full (" "max 65536 elements)";
    case IV_FAULT_DICT_FULL: return "dict full (max 1024 keys)";
    case IV_FAULT_STUCK: return "an atomic section never reached its ATOMIC_END";
    case IV_FAULT_TYPE: return "a value of the wrong type (a list or dict where an int is "
                               "expected, or an int or dict where a list is)";
    default: return "?";
    }
}

static int iv_check(void *ctx, struct wl_thread *threads, int nthreads, char *msg,
                    size_t msglen)
{
    (void)threads;
    const struct iv_ctx *cx = ctx;
    const struct iv_program *pr = cx->prog;
    int64_t total = 0;
    for (int t = 0; t < nthreads && t < cx->nthreads; t++) {
        const struct iv_thread *th = &cx->th[t];
        const struct iv_vm *vm = &th->vm[th->cur];
        if (vm->faults) {
            snprintf(msg, msglen, "interp %s: thread %d: %llu run-time fault%s, the first at "
                     "line %d: %s", pr->name, t, (unsigned long long)vm->faults,
                     vm->faults == 1 ? "" : "s", pr->line[vm->fault_pc],
                     iv_fault_name(vm->fault_kind));
            return -1;
        }
        if (th->unfinished) {
            snprintf(msg, msglen, "interp %s: thread %d did not reach HALT within %llu "
                     "bytecodes after the stop (lower --iterations?)", pr->name, t,
                     (unsigned long long)IV_DRAIN_MAX);
            return -1;
        }
        total += (int64_t)vm->runs;
    }
    int bad = -1, bad_tid = 0;
    int64_t bad_l = 0, bad_r = 0, bad_runs = 0;
    struct iv_check_env ce = { .cx = cx };
    int bad_type = 0;
    SYNC_ATOMIC("interp.check") {
        bad = -1;
        ce.not_int = 0;
        for (int e = 0; e < pr->nexpects && bad < 0; e++) {
            const struct iv_expect *ex = &pr->expects[e];
            int nt = ex->per_thread ? cx->nthreads : 1;
            for (int t = 0; t < nt && bad < 0; t++) {
                const struct iv_thread *th = &cx->th[t];
                struct iv_env env = {
                    .runs = ex->per_thread ? (int64_t)th->vm[th->cur].runs : total,
                    .threads = cx->nthreads, .iter = pr->params.iterations, .tid = t,
                    .obj = iv_check_obj, .u = &ce,
                };
                int64_t l = iv_expr_eval(&ex->lhs, &env), r = iv_expr_eval(&ex->rhs, &env);
                bad_type = ce.not_int;
                if (l != r || bad_type) {
                    bad = e;
                    bad_tid = t;
                    bad_l = l;
                    bad_r = r;
                    bad_runs = env.runs;
                }
            }
        }
    }
    if (bad >= 0) {
        const struct iv_expect *ex = &pr->expects[bad];
        char who[32] = "";
        if (ex->per_thread)
            snprintf(who, sizeof who, " for thread %d", bad_tid);
        if (bad_type) {
            snprintf(msg, msglen, "interp %s: line %d: `.expect %s` reads a list or dict "
                     "where it needs an int%s", pr->name, ex->line, ex->text, who);
            return -1;
        }
        snprintf(msg, msglen, "interp %s: line %d: `.expect %s` fails%s: %lld != %lld "
                 "(RUNS=%lld, THREADS=%d, ITER=%lld)", pr->name, ex->line, ex->text, who,
                 (long long)bad_l, (long long)bad_r, (long long)bad_runs, cx->nthreads,
                 (long long)pr->params.iterations);
        return -1;
    }
    /* the memory mode's own check: its counts (or registries) against the heap */
    return iv_mem_check(cx->memory, cx, msg, msglen);
}

/* ---- conflict analysis: descriptions (struct workload, describe_*) ---- */

/* "shared-counter:14 in main (STORE_GLOBAL counter)": the program, the source line,
 * the function and the instruction of location `where` (1 + a bytecode index). */
static void iv_describe_where(void *ctx, uint32_t where, char *buf, size_t n)
{
    const struct iv_ctx *cx = ctx;
    const struct iv_program *pr = cx->prog;
    buf[0] = '\0';
    if (where == 0 || where > (uint32_t)pr->ncode)
        return;
    int i = (int)where - 1;
    const struct iv_insn *in = &pr->code[i];
    const char *arg = "";
    switch (in->op) {
    case IV_LOAD_GLOBAL: case IV_STORE_GLOBAL: case IV_LIST_APPEND: case IV_LIST_GET:
    case IV_LIST_SET: case IV_LIST_LEN: case IV_LIST_CLEAR: case IV_DICT_GET:
    case IV_DICT_SET: case IV_DICT_LEN: case IV_LIST_POP: case IV_QUEUE_PUT: case IV_QUEUE_GET:
        if (in->a >= 0 && in->a < pr->nglobals)
            arg = pr->globals[in->a].name;
        break;
    default:
        break;
    }
    snprintf(buf, n, "%s:%d in %s (%s%s%s)", pr->name, pr->line[i], iv_func_of(pr, i),
             iv_op_name(in->op), *arg ? " " : "", arg);
}

/* "int counter", "list log", "list log[64..127]" (a chunk of its elements), "dict
 * by_slot (thread 1)" for a per-thread object; empty when obj is none of them. Reads
 * the heap as the check does (main thread, after the run). */
static void iv_describe_object(void *ctx, uint64_t obj, char *buf, size_t n)
{
    const struct iv_ctx *cx = ctx;
    const struct iv_program *pr = cx->prog;
    static const char *const kinds[] = {"int", "list", "dict"};
    buf[0] = '\0';
    if (!obj)
        return;
    for (int g = 0; g < pr->nglobals; g++) {
        const struct iv_global *gl = &pr->globals[g];
        int ninst = gl->per_thread ? cx->nthreads : 1;
        for (int t = 0; t < ninst; t++) {
            iv_ref r = cx->objs[(size_t)g * (size_t)cx->nthreads + (size_t)t];
            char who[24] = "";
            if (gl->per_thread)
                snprintf(who, sizeof who, " (thread %d)", t);
            if (SYNC_REF_ID(r) == obj) {
                snprintf(buf, n, "%s %s%s", kinds[gl->kind], gl->name, who);
                return;
            }
            if (gl->kind != IV_KIND_LIST || cx->memory != IV_MEM_RAW || r == SYNC_NULL)
                continue;
            iv_list_ref l = (iv_list_ref)r;
            iv_dir_ref d = l->dir;
            if (d == SYNC_NULL)
                continue;
            if (SYNC_REF_ID(d) == obj) {
                snprintf(buf, n, "list %s (its directory)%s", gl->name, who);
                return;
            }
            for (int k = 0; k < IV_NCHUNKS; k++)
                if (d->c[k] != SYNC_NULL && SYNC_REF_ID(d->c[k]) == obj) {
                    snprintf(buf, n, "list %s[%d..%d]%s", gl->name, k * IV_CHUNK,
                             k * IV_CHUNK + IV_CHUNK - 1, who);
                    return;
                }
        }
    }
}

#endif
