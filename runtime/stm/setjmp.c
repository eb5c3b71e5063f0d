/*
 * runtime/stm/setjmp.c - the atomic block's restart point (the "setjmp" part of the page-based
 * STM; the invariants I1..I7 and the other files are listed in stm_internal.h).
 *
 * Invariants: none of its own; an abort (commit.c) has rolled the attempt back before
 * it jumps here. Memory order: none (registers only).
 */

#include "runtime/stm/sync_stm.h"

/* ------------------------------------------------------------------ setjmp */

/*
 * stm_setjmp / stm_longjmp: the atomic block's restart point. Saves only what the
 * x86-64 System V ABI says a callee keeps (rbx, rbp, r12-r15, rsp) and the return
 * address: about a third of glibc's _setjmp, which also mangles pointers and handles
 * the signal mask (neither is needed here: aborts never cross a signal handler).
 * The C declaration carries returns_twice, so compilers treat it like setjmp.
 */
__asm__(".text\n"
        ".globl stm_setjmp\n"
        ".type stm_setjmp, @function\n"
        "stm_setjmp:\n"
        "    mov %rbx, 0(%rdi)\n"
        "    mov %rbp, 8(%rdi)\n"
        "    mov %r12, 16(%rdi)\n"
        "    mov %r13, 24(%rdi)\n"
        "    mov %r14, 32(%rdi)\n"
        "    mov %r15, 40(%rdi)\n"
        "    lea 8(%rsp), %rdx\n"        /* the caller's stack pointer after return */
        "    mov %rdx, 48(%rdi)\n"
        "    mov (%rsp), %rdx\n"         /* the return address */
        "    mov %rdx, 56(%rdi)\n"
        "    xor %eax, %eax\n"
        "    ret\n"
        ".size stm_setjmp, .-stm_setjmp\n"
        ".globl stm_longjmp\n"
        ".type stm_longjmp, @function\n"
        "stm_longjmp:\n"
        "    mov 0(%rdi), %rbx\n"
        "    mov 8(%rdi), %rbp\n"
        "    mov 16(%rdi), %r12\n"
        "    mov 24(%rdi), %r13\n"
        "    mov 32(%rdi), %r14\n"
        "    mov 40(%rdi), %r15\n"
        "    mov 48(%rdi), %rsp\n"
        "    mov $1, %eax\n"
        "    jmp *56(%rdi)\n"
        ".size stm_longjmp, .-stm_longjmp\n");
