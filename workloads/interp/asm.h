/*
 * workloads/interp/asm.h - the interp workload's program format: the assembler
 * (text -> checked bytecode), the expression language of `.const` and `.expect`, and
 * the built-in programs. Runtime-independent: nothing here touches the shared heap.
 *
 * The format is documented in docs/interp.md. The loader accepts a program only if
 * it can run without a run-time error the VM cannot turn into a defined value: every
 * operand resolves, every jump and call lands on an instruction, the operand-stack
 * depth and the atomic-section depth are the same on every path to an instruction
 * (so no underflow, no unbalanced ATOMIC_BEGIN/END), no function is recursive, and
 * the total stack a thread needs is bounded by IV_VALS_MAX.
 */
#ifndef IV_ASM_H
#define IV_ASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workloads/interp/modes.h"

#define IV_NAME_MAX 32        /* identifier length, NUL included */
#define IV_MAX_GLOBALS 64     /* declared objects (one bit each in an atomic set) */
#define IV_MAX_CODE 65536     /* instructions */
#define IV_MAX_FILE (1 << 20) /* bytes of program text */
#define IV_LINE_MAX 1024      /* characters per line */
#define IV_STACK_MAX 64       /* operand-stack depth within one frame */
#define IV_LOCALS_MAX 32      /* locals per frame */
#define IV_FRAMES_MAX 32      /* call depth (main included) */
#define IV_VALS_MAX 1024      /* stack slots of one thread (locals + operands, all frames) */
#define IV_EXPR_MAX 64        /* nodes of one expression */
#define IV_EXPR_NEST 16       /* parenthesis nesting of one expression */
#define IV_MAX_EXPECTS 64
#define IV_MAX_CONSTS 64
#define IV_MAX_FUNCS 256
#define IV_LIST_MAX 65536     /* elements per list; an append beyond is a run-time fault */
#define IV_DICT_MAX 1024      /* keys per dict; a new key beyond is a run-time fault */

enum iv_op {
    IV_NOP, IV_PUSH, IV_POP, IV_DUP, IV_SWAP,
    IV_LOAD_GLOBAL, IV_STORE_GLOBAL, IV_LOAD_LOCAL, IV_STORE_LOCAL,
    IV_ADD, IV_SUB, IV_MUL, IV_DIV, IV_MOD, IV_LT, IV_GT, IV_EQ, IV_NOT,
    IV_JUMP, IV_JUMP_IF_FALSE, IV_JUMP_IF_TRUE, IV_CALL, IV_RET,
    IV_LIST_APPEND, IV_LIST_GET, IV_LIST_SET, IV_LIST_LEN, IV_LIST_CLEAR,
    IV_DICT_GET, IV_DICT_SET, IV_DICT_LEN,
    IV_THREAD_ID, IV_ATOMIC_BEGIN, IV_ATOMIC_END, IV_HALT,
    /* the object model (--memory other than raw): containers on the stack */
    IV_NEW_LIST, IV_NEW_DICT, IV_APPEND, IV_GETITEM, IV_SETITEM, IV_LEN, IV_POPITEM,
    IV_CONTAINS, IV_LIST_POP,
    /* a declared queue's (queue.h): put pops a value, get pushes one (0 when empty) */
    IV_QUEUE_PUT, IV_QUEUE_GET,
    IV_NOPS
};
const char *iv_op_name(int op);

/* One instruction. v: PUSH's constant, CALL's callee locals count.
 * a: global index, local index, jump/call target. b: CALL's argument count. */
struct iv_insn {
    int64_t v;
    int32_t a;
    int16_t b;
    uint8_t op;
    uint8_t pad;
};

enum iv_kind { IV_KIND_INT, IV_KIND_LIST, IV_KIND_DICT, IV_KIND_QUEUE };

struct iv_global {
    char name[IV_NAME_MAX];
    uint8_t kind;            /* enum iv_kind */
    uint8_t per_thread;      /* one object per thread */
    uint8_t per_entry;       /* a dict declared `stmdict`: conflicts per key (sdict.h) */
    int64_t init;            /* initial value of an int */
    int line;
};

/* Expressions are kept in postfix (RPN) order. */
enum iv_enode_kind {
    IV_E_NUM, IV_E_RUNS, IV_E_THREADS, IV_E_ITER, IV_E_TID,
    IV_E_GVAL,   /* value of int global g */
    IV_E_LEN,    /* len(list or dict g) */
    IV_E_SUM,    /* sum of the elements (list) or values (dict) of g */
    IV_E_GET,    /* g[key]: pops the key; list index out of range or missing key -> 0 */
    IV_E_ADD, IV_E_SUB, IV_E_MUL, IV_E_DIV, IV_E_MOD, IV_E_NEG,
};
struct iv_enode {
    int64_t v;
    int32_t g;
    uint8_t kind;
};
struct iv_expr {
    int n;
    struct iv_enode node[IV_EXPR_MAX];
};

/* What an expression is evaluated against. `obj` answers IV_E_GVAL/LEN/SUM/GET for
 * global g (per-thread objects: the instance of thread `tid`). */
struct iv_env {
    int64_t runs, threads, iter, tid;
    int64_t (*obj)(void *u, int what, int g, int64_t tid, int64_t key);
    void *u;
};
int64_t iv_expr_eval(const struct iv_expr *e, const struct iv_env *env);

struct iv_expect {
    int line;
    bool per_thread;          /* mentions TID or a per-thread object: checked per thread */
    struct iv_expr lhs, rhs;
    char text[96];            /* the source text, for messages */
};

/* Memory management of the VM (--memory; docs/interp.md, "Objects and memory"):
 * raw: integers are machine words and nothing is allocated while a program runs (the
 * VM of before the object model); the others box integers outside IV_SMALL_MIN..MAX,
 * allow lists and dicts made at run time and references anywhere, and differ in how
 * garbage is found: a tracing collector, plain reference counts (CPython with its
 * GIL), PEP 703's biased counts with immortal objects, or counts kept outside the
 * shared heap and changed after each block (buffered: the STM's own scheme). */
#define IV_MEM_ENUM_(NAME, name) IV_MEM_##NAME,
enum iv_memory { IV_MEMORY_MODES(IV_MEM_ENUM_) IV_NMEM };
#undef IV_MEM_ENUM_
extern const char *const iv_memory_names[IV_NMEM];
int iv_memory_find(const char *name);          /* -1 when unknown */

/* Load-time parameters: the constants ITER and THREADS, and the memory mode (the
 * object model's opcodes load only where it is not raw). */
struct iv_params {
    int64_t iterations;
    int64_t threads;
    int memory;               /* enum iv_memory */
};

/* A function of a program: the first instruction of main or a CALL target, with the
 * label that names it (conflict analysis names a bytecode's function). */
struct iv_func {
    int pc;
    char name[IV_NAME_MAX];
};

struct iv_program {
    char name[64];
    struct iv_insn *code;
    int *line;                /* source line of each instruction */
    uint64_t *atomic_set;     /* per instruction: for an ATOMIC_BEGIN, the globals (bits)
                                 its section may touch, callees included; else 0 */
    int ncode;
    struct iv_func *funcs;    /* by increasing pc; funcs[0] is main, at pc 0 */
    int nfuncs;
    struct iv_global globals[IV_MAX_GLOBALS];
    int nglobals;
    struct iv_expect expects[IV_MAX_EXPECTS];
    int nexpects;
    int main_nlocals;         /* locals of the main frame */
    int max_vals;             /* stack slots one thread needs, all frames */
    int max_frames;           /* deepest call chain, main included */
    struct iv_params params;
};

/* Assembles `len` bytes of program text (need not be NUL-terminated). `src` names it
 * in messages ("file.stm:12: unknown opcode 'FOO'"). 0 and *out set, or -1 and err. */
int iv_asm_parse(const char *text, size_t len, const char *src, const struct iv_params *p,
                 struct iv_program **out, char *err, size_t errlen);
/* A built-in program name, or else a file path. */
int iv_asm_load(const char *spec, const struct iv_params *p, struct iv_program **out,
                char *err, size_t errlen);
void iv_program_free(struct iv_program *prog);
/* The function instruction idx belongs to: the last function starting at or before it. */
const char *iv_func_of(const struct iv_program *prog, int idx);

/* Built-in programs (programs.c): NULL-terminated names, text by name. */
extern const char *const iv_builtin_names[];
const char *iv_builtin_text(const char *name);

/* Arithmetic of the VM and the expressions: wraps around, never traps. x/0 and x%0 are
 * 0; INT64_MIN / -1 is INT64_MIN. */
static inline int64_t iv_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t iv_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static inline int64_t iv_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static inline int64_t iv_div(int64_t a, int64_t b)
{
    if (b == 0)
        return 0;
    if (b == -1)
        return iv_sub(0, a);
    return a / b;
}
static inline int64_t iv_mod(int64_t a, int64_t b)
{
    if (b == 0 || b == -1)
        return 0;
    return a % b;
}

#endif
