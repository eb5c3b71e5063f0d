/*
 * tests/fuzz/fuzz_asm.c - libFuzzer target 1 of `make fuzz` (scripts/fuzz.sh): the
 * interp loader alone, fast (many thousand inputs a second). The bytes are a program
 * text given to iv_asm_parse. Every input must end either in a message that names the
 * source, or in a program that keeps the promises the VM relies on instead of run-time
 * checks (workloads/interp/asm.h): operands in range, jumps and calls landing on
 * instructions, bounded stack and call depth. Target 2, which also runs what loads, is
 * tests/fuzz/fuzz_run.c. Built with ASan and UBSan (Makefile, FUZZ_LIB).
 *
 * Only the loader's public interface is used here (interp_asm.h).
 */
#include "workloads/interp/asm.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken promise is a bug of the loader: report it and abort (libFuzzer keeps the
 * input as a crash file). */
static void fz_broken(const struct iv_program *p, int i, const char *what)
{
    fprintf(stderr, "fuzz_asm: loaded program breaks a promise at instruction %d of %d "
            "(%s, line %d): %s\n", i, p->ncode, i >= 0 ? iv_op_name(p->code[i].op) : "-",
            i >= 0 ? p->line[i] : 0, what);
    abort();
}

static void fz_check_program(const struct iv_program *p)
{
    if (p->ncode < 1 || p->ncode > IV_MAX_CODE)
        fz_broken(p, -1, "instruction count out of range");
    if (p->nglobals < 0 || p->nglobals > IV_MAX_GLOBALS)
        fz_broken(p, -1, "object count out of range");
    if (p->max_vals > IV_VALS_MAX || p->max_vals < p->main_nlocals)
        fz_broken(p, -1, "stack slots out of range");
    if (p->max_frames < 1 || p->max_frames > IV_FRAMES_MAX)
        fz_broken(p, -1, "call depth out of range");
    if (p->nexpects < 0 || p->nexpects > IV_MAX_EXPECTS)
        fz_broken(p, -1, "expectation count out of range");
    for (int i = 0; i < p->ncode; i++) {
        const struct iv_insn *in = &p->code[i];
        switch (in->op) {
        case IV_LOAD_GLOBAL: case IV_STORE_GLOBAL:
        case IV_LIST_APPEND: case IV_LIST_GET: case IV_LIST_SET: case IV_LIST_LEN:
        case IV_LIST_CLEAR: case IV_DICT_GET: case IV_DICT_SET: case IV_DICT_LEN:
            if (in->a < 0 || in->a >= p->nglobals)
                fz_broken(p, i, "object operand out of range");
            break;
        case IV_LOAD_LOCAL: case IV_STORE_LOCAL:
            if (in->a < 0 || in->a >= IV_LOCALS_MAX)
                fz_broken(p, i, "local operand out of range");
            break;
        case IV_JUMP: case IV_JUMP_IF_FALSE: case IV_JUMP_IF_TRUE: case IV_CALL:
            if (in->a < 0 || in->a >= p->ncode)
                fz_broken(p, i, "target outside the code");
            break;
        default:
            if (in->op >= IV_NOPS)
                fz_broken(p, i, "unknown opcode");
            break;
        }
        if (p->atomic_set[i] && in->op != IV_ATOMIC_BEGIN)
            fz_broken(p, i, "an atomic set on an instruction that is no ATOMIC_BEGIN");
    }
}

/* One load with the raw VM's rules and one with the object model's (its opcodes, and
 * the type proofs over every path). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int objects = 0; objects < 2; objects++) {
        struct iv_params params = { .iterations = 7, .threads = 2,
                                    .memory = objects ? IV_MEM_REFCOUNT : IV_MEM_RAW };
        struct iv_program *prog = NULL;
        char err[512] = "";
        if (iv_asm_parse((const char *)data, size, "fuzz", &params, &prog, err, sizeof err) < 0) {
            if (prog != NULL || strncmp(err, "fuzz", 4) != 0) {
                fprintf(stderr, "fuzz_asm: a rejected input left a program or a message "
                        "that does not name its source: '%s'\n", err);
                abort();
            }
            continue;
        }
        fz_check_program(prog);
        iv_program_free(prog);
    }
    return 0;
}
