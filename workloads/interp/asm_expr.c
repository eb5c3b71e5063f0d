/*
 * workloads/interp/asm_expr.c - the loader's expressions (docs/interp.md, "Program
 * format"): `.const` values and `.expect` sides, kept in postfix order (struct
 * iv_expr), and their evaluation against a finished run (iv_expr_eval). asm.c calls
 * them from its two passes.
 */
#include "workloads/interp/asm_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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
                       gl->kind == IV_KIND_LIST ? "list" : gl->kind == IV_KIND_DICT ? "dict"
                                                                                  : "queue",
                       name, name, name);
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

int xp_expr(struct asm_xp *x)
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
int asm_const_expr(struct asm_st *a, int line, const char **pp, int64_t *v)
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

