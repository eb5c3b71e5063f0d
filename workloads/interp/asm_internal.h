/*
 * workloads/interp/asm_internal.h - what the loader's three files share: asm.c (the
 * lines, the two passes, the entry points), asm_expr.c (expressions: `.const`,
 * `.expect`) and asm_analysis.c (the static analysis after pass 2). Not for the VM.
 */
#ifndef IV_ASM_INTERNAL_H
#define IV_ASM_INTERNAL_H

#include "workloads/interp/asm.h"

/* Operand shape of each opcode. */
enum asm_shape { SH_NONE, SH_CONST, SH_INT, SH_LIST, SH_DICT, SH_QUEUE, SH_LOCAL, SH_LABEL, SH_CALL };
enum asm_shape asm_shape(int op);

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

/* The state of parsing one expression. */
struct asm_xp {
    struct asm_st *a;
    const char *p;
    int line;
    struct iv_expr *e;
    bool expect;               /* .expect: run counts and objects allowed */
    bool per_thread;           /* mentions TID or a per-thread object */
    int nest;
};

/* Sets the message (the source, line when > 0, and the text); returns -1. */
int asm_err(struct asm_st *a, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *asm_skip(const char *p);
bool asm_ident_char(char c);
int asm_ident(struct asm_st *a, int line, const char **pp, char out[IV_NAME_MAX]);
const struct asm_const *asm_find_const(const struct asm_st *a, const char *name);
int asm_find_global(const struct asm_st *a, const char *name);

/* asm_expr.c */
int xp_expr(struct asm_xp *x);
int asm_const_expr(struct asm_st *a, int line, const char **pp, int64_t *v);

/* asm_analysis.c */
int asm_analyse(struct asm_st *a);
int asm_funcs(struct asm_st *a);

#endif
