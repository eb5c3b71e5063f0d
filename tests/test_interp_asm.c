/*
 * tests/test_interp_asm.c - the interp assembler/loader (workloads/interp/asm.c):
 * the built-in programs and the example programs under tests/programs load; every kind of bad program is
 * rejected with a message naming the right line; expressions, constants, call frames
 * and the atomic sections' object sets come out as documented in docs/interp.md.
 */
#include "workloads/interp/asm.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static const struct iv_params params = { .iterations = 1000, .threads = 2 };

static struct iv_program *load_ok(const char *text)
{
    struct iv_program *p = NULL;
    char err[512] = "";
    int rc = iv_asm_parse(text, strlen(text), "t.stm", &params, &p, err, sizeof err);
    if (rc != 0)
        fail_msg("expected the program to load, got: %s", err);
    assert_non_null(p);
    return p;
}

/* Asserts that text is rejected with "t.stm:LINE: ..." containing `what`. */
static void load_bad(const char *text, size_t len, int line, const char *what)
{
    struct iv_program *p = (struct iv_program *)1;
    char err[512] = "";
    int rc = iv_asm_parse(text, len, "t.stm", &params, &p, err, sizeof err);
    if (rc != -1)
        fail_msg("expected rejection (%s) of:\n%s", what, text);
    assert_null(p);
    char prefix[32];
    if (line > 0)
        snprintf(prefix, sizeof prefix, "t.stm:%d: ", line);
    else
        snprintf(prefix, sizeof prefix, "t.stm: ");
    if (strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, what))
        fail_msg("message '%s' should start with '%s' and contain '%s'", err, prefix, what);
}
#define BAD(text, line, what) load_bad((text), strlen(text), (line), (what))

#define HDR ".global int x\n.expect x = 0\n"       /* two lines: programs start at line 3 */

static void test_builtins_load(void **state)
{
    (void)state;
    int n = 0, objects_only = 0;
    for (int i = 0; iv_builtin_names[i]; i++, n++) {
        struct iv_program *p = NULL;
        char err[512];
        struct iv_params obj = params;
        obj.memory = IV_MEM_TRACING;
        if (iv_asm_load(iv_builtin_names[i], &obj, &p, err, sizeof err) != 0)
            fail_msg("built-in %s: %s", iv_builtin_names[i], err);
        assert_true(p->ncode > 0);
        assert_true(p->nexpects > 0);
        iv_program_free(p);
        /* the object model's programs say what they need where ints are words */
        if (iv_asm_load(iv_builtin_names[i], &params, &p, err, sizeof err) != 0) {
            assert_non_null(strstr(err, "--memory"));
            objects_only++;
        } else {
            iv_program_free(p);
        }
    }
    assert_int_equal(n, 11);
    assert_int_equal(objects_only, 5);                  /* arith runs raw too */
    assert_non_null(iv_builtin_text("counters"));
    assert_non_null(iv_builtin_text("shared-counter"));
    assert_non_null(iv_builtin_text("list-append"));
    assert_non_null(iv_builtin_text("mixed"));
    assert_null(iv_builtin_text("nope"));
}

static void test_program_files_load(void **state)
{
    (void)state;
    static const char *const files[] = { "tests/programs/fib.stm", "tests/programs/bank.stm",
                                         "tests/programs/matrix.stm",
                                         "tests/programs/atomicity.stm", NULL };
    for (int i = 0; files[i]; i++) {
        struct iv_program *p = NULL;
        char err[512];
        if (iv_asm_load(files[i], &params, &p, err, sizeof err) != 0)
            fail_msg("%s: %s", files[i], err);
        iv_program_free(p);
    }
}

static void test_unknown_opcode(void **state)
{
    (void)state;
    BAD(HDR "PUSH 1\nFROB 2\nHALT\n", 4, "unknown opcode 'FROB'");
    BAD(HDR "loop: PUSHX\nHALT\n", 3, "unknown opcode 'PUSHX'");
    BAD(HDR "\n\n  # comment\n 12 \nHALT\n", 6, "unknown opcode '12'");
    BAD(HDR "HALT\n.frob x\n", 4, "unknown directive '.frob'");
}

static void test_bad_operand(void **state)
{
    (void)state;
    BAD(HDR "PUSH\nHALT\n", 3, "PUSH needs a value");
    BAD(HDR "PUSH foo\nHALT\n", 3, "unknown constant 'foo'");
    BAD(HDR "PUSH 99999999999999999999\nHALT\n", 3, "out of range");
    BAD(HDR "PUSH 1 2\nHALT\n", 3, "unexpected '2' after PUSH");
    BAD(HDR "LOAD_LOCAL 32\nHALT\n", 3, "local index out of range");
    BAD(HDR "LOAD_LOCAL -1\nHALT\n", 3, "expected local index");
    BAD(HDR "LOAD_GLOBAL y\nHALT\n", 3, "undeclared object 'y'");
    BAD(".global list l\n.expect len(l) = 0\nLOAD_GLOBAL l\nHALT\n", 3,
        "LOAD_GLOBAL needs an int, but 'l' is a list");
    BAD(HDR "DICT_GET x\nHALT\n", 3, "DICT_GET needs a dict, but 'x' is an int");
    BAD(HDR "CALL f\nHALT\nf: PUSH 0\nRET\n", 3, "expected argument count");
    BAD(HDR "ADD 1\nHALT\n", 3, "unexpected '1' after ADD");
    BAD(HDR ".const x = 3\nHALT\n", 3, "'x' is already declared");
    BAD(HDR ".global int ITER\nHALT\n", 3, "reserved word");
    BAD(".global int x\n.expect x = len(x)\nHALT\n", 2, "needs a list or dict");
    BAD(".global int x\n.expect x = (1 + \nHALT\n", 2, "expression ends too early");
    BAD(".global int x\n.expect x + 1\nHALT\n", 2, ".expect needs 'EXPRESSION = EXPRESSION'");
    BAD(HDR "PUSH ((((((((((((((((((1))))))))))))))))))\nHALT\n", 3, "nested deeper");
}

static void test_underflow(void **state)
{
    (void)state;
    BAD(HDR "PUSH 1\nADD\nHALT\n", 4, "stack underflow: ADD needs 2 values, the stack holds 1");
    BAD(HDR "POP\nHALT\n", 3, "stack underflow: POP needs 1 value");
    BAD(HDR "STORE_GLOBAL x\nHALT\n", 3, "stack underflow");
    /* depth differs on two paths into one instruction */
    BAD(HDR "PUSH 1\nJUMP_IF_FALSE l\nPUSH 2\nl: HALT\n", 6, "stack depth differs");
    BAD(HDR "PUSH 1\nPUSH 2\nCALL f 3\nHALT\nf: PUSH 0\nRET\n", 5, "stack underflow: CALL");
    BAD(HDR "CALL f 0\nPOP\nHALT\nf: RET\n", 6, "RET needs 1 value");
}

static void test_jumps(void **state)
{
    (void)state;
    BAD(HDR "JUMP nowhere\nHALT\n", 3, "JUMP to unknown label 'nowhere'");
    BAD(HDR "PUSH 1\nJUMP_IF_TRUE end\nHALT\nend:\n", 4, "out of range");
    BAD(HDR "CALL f 0\nHALT\nf:\n", 3, "out of range");
    BAD(HDR "l: PUSH 0\nl: HALT\n", 4, "label 'l' already defined at line 3");
    BAD(HDR "PUSH 1\nPOP\n", 4, "runs past the last instruction");
    BAD(HDR "NOP\nJUMP 3\nHALT\n", 4, "JUMP needs a label");
    BAD(HDR "JUMP l\nl: JUMP l\n", 0, "never reaches HALT");
    BAD(HDR "CALL f 0\nPOP\nHALT\nf: CALL f 0\nRET\n", 6, "recursive call to 'f'");
    BAD(HDR "CALL f 0\nPOP\nHALT\nf: CALL g 0\nRET\ng: CALL f 0\nRET\n", 8,
        "recursive call to 'f'");
    BAD(HDR "PUSH 1\nRET\n", 4, "RET outside a function");
    BAD(HDR "CALL f 0\nf: PUSH 1\nRET\n", 5, "RET outside a function");   /* falls into f */
    BAD(HDR "l: CALL f 0\nPOP\nHALT\nf: JUMP l\n", 3, "jumps between functions");
    BAD(HDR "CALL f 0\nPOP\nPUSH 1\nCALL f 1\nPOP\nHALT\nf: PUSH 1\nRET\n", 6,
        "called with 0 elsewhere");
}

static void test_unbalanced_atomic(void **state)
{
    (void)state;
    BAD(HDR "ATOMIC_BEGIN\nHALT\n", 4, "HALT inside an atomic section");
    BAD(HDR "ATOMIC_END\nHALT\n", 3, "ATOMIC_END without ATOMIC_BEGIN");
    BAD(HDR "PUSH 1\nJUMP_IF_FALSE l\nATOMIC_BEGIN\nl: ATOMIC_END\nHALT\n", 6,
        "atomic depth differs");
    BAD(HDR "CALL f 0\nPOP\nHALT\nf: ATOMIC_BEGIN\nPUSH 0\nRET\n", 8, "RET inside an atomic");
}

static void test_missing_empty_binary(void **state)
{
    (void)state;
    struct iv_program *p = NULL;
    char err[512];
    assert_int_equal(iv_asm_load("/nonexistent/dir/prog.stm", &params, &p, err, sizeof err), -1);
    assert_null(p);
    assert_non_null(strstr(err, "/nonexistent/dir/prog.stm"));
    assert_non_null(strstr(err, "No such file"));
    assert_non_null(strstr(err, "counters"));                /* names the built-ins */

    char path[] = "/tmp/test_interp_asm.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(iv_asm_load(path, &params, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "empty program (0 bytes)"));
    static const char bin[] = HDR "PUSH 1\n\x01\x02\x00\xff\nHALT\n";
    assert_int_equal(write(fd, bin, sizeof bin - 1), (ssize_t)(sizeof bin - 1));
    close(fd);
    assert_int_equal(iv_asm_load(path, &params, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, ":4: binary data (byte 0x01)"));
    unlink(path);
    assert_int_equal(iv_asm_load("/tmp", &params, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a regular file"));

    load_bad("\0\0\0", 3, 1, "binary data (byte 0x00)");
    load_bad("", 0, 0, "empty program");
    BAD("# only a comment\n\n", 0, "no instructions");
    BAD("HALT\n", 0, "no .expect line");
    char longline[IV_LINE_MAX + 40];
    memset(longline, 'N', sizeof longline);
    memcpy(longline, HDR, strlen(HDR));
    longline[sizeof longline - 1] = 0;
    load_bad(longline, strlen(longline), 3, "line longer than");
}

static int64_t fake_obj(void *u, int what, int g, int64_t tid, int64_t key)
{
    (void)u;
    return what * 1000 + g * 100 + tid * 10 + key;
}

static void test_expressions_and_consts(void **state)
{
    (void)state;
    struct iv_program *p = load_ok(
        ".const A = ITER * 2 + THREADS   # 2002\n"
        ".const B = -(A / 7) % 5\n"
        ".global int x = A - 2\n"
        ".per_thread dict d\n"
        ".expect x = RUNS * 3 - -TID\n"
        ".expect d[2] + len(d) * 0x10 = 7 / 0 + 5 % 0\n"
        "PUSH A\nPUSH B\nPUSH 1 - 2 * 3\nPOP\nPOP\nPOP\nHALT\n");
    assert_int_equal(p->code[0].v, 2002);
    assert_int_equal(p->code[1].v, -(2002 / 7) % 5);
    assert_int_equal(p->code[2].v, -5);
    assert_int_equal(p->globals[0].init, 2000);
    assert_int_equal(p->globals[1].per_thread, 1);
    assert_int_equal(p->nexpects, 2);
    assert_true(p->expects[0].per_thread);                  /* mentions TID */
    assert_true(p->expects[1].per_thread);                  /* a per-thread dict */
    assert_string_equal(p->expects[0].text, "x = RUNS * 3 - -TID");
    struct iv_env env = { .runs = 4, .threads = 2, .iter = 1000, .tid = 1, .obj = fake_obj };
    assert_int_equal(iv_expr_eval(&p->expects[0].rhs, &env), 13);
    assert_int_equal(iv_expr_eval(&p->expects[0].lhs, &env), IV_E_GVAL * 1000 + 10);
    assert_int_equal(iv_expr_eval(&p->expects[1].lhs, &env),
                     IV_E_GET * 1000 + 100 + 10 + 2 + (IV_E_LEN * 1000 + 100 + 10) * 16);
    assert_int_equal(iv_expr_eval(&p->expects[1].rhs, &env), 0);   /* x/0 = x%0 = 0 */
    iv_program_free(p);
    assert_int_equal(iv_div(INT64_MIN, -1), INT64_MIN);
    assert_int_equal(iv_mod(INT64_MIN, -1), 0);
    assert_int_equal(iv_add(INT64_MAX, 1), INT64_MIN);
}

static void test_frames_and_atomic_sets(void **state)
{
    (void)state;
    /* main uses locals 0..2; f(2 args) uses locals up to 4; g is called inside f. */
    struct iv_program *p = load_ok(
        ".global int a\n.global int b\n.global list c\n.per_thread dict d\n"
        ".expect a = 0\n"
        "PUSH 1\nSTORE_LOCAL 2\n"                               /* 0, 1 */
        "ATOMIC_BEGIN\nLOAD_GLOBAL a\nPOP\nATOMIC_END\n"        /* 2..5: section {a} */
        "ATOMIC_BEGIN\nPUSH 1\nPUSH 2\nCALL f 2\nPOP\nATOMIC_END\n" /* 6..11: {b,c,d} */
        "LIST_LEN c\nPOP\nHALT\n"                               /* 12..14 */
        "f: LOAD_LOCAL 4\nPOP\nATOMIC_BEGIN\nLOAD_GLOBAL b\nATOMIC_END\n" /* 15..19 */
        "CALL g 1\nRET\n"                                       /* 20, 21 */
        "g: DICT_LEN d\nLIST_LEN c\nADD\nRET\n");
    assert_int_equal(p->main_nlocals, 3);
    assert_int_equal(p->code[9].op, IV_CALL);
    assert_int_equal(p->code[9].v, 5);                      /* f's locals */
    assert_int_equal(p->code[20].v, 1);                     /* g's locals: its argument */
    assert_int_equal(p->max_frames, 3);
    assert_int_equal(p->atomic_set[2], 1u << 0);
    assert_int_equal(p->atomic_set[6], (1u << 1) | (1u << 2) | (1u << 3));
    assert_int_equal(p->atomic_set[17], 1u << 1);
    assert_int_equal(p->atomic_set[0], 0);
    /* 3 + 2 operands in main, 5 locals + 2 operands in f, 1 + 2 in g */
    assert_int_equal(p->max_vals, 3 + 2 + 5 + 1 + 1 + 2);
    iv_program_free(p);
}

/* The object model's types: what the loader can prove is rejected, naming the line and
 * the operand; what depends on a local, a cell or an element is left to the VM. */
static int load_obj(const char *text, char *err, size_t errlen)
{
    struct iv_params obj = params;
    obj.memory = IV_MEM_REFCOUNT;
    struct iv_program *p = NULL;
    int rc = iv_asm_parse(text, strlen(text), "t.stm", &obj, &p, err, errlen);
    iv_program_free(p);
    return rc;
}

static void obj_bad(const char *text, const char *prefix, const char *what)
{
    char err[512] = "";
    if (load_obj(text, err, sizeof err) == 0)
        fail_msg("expected rejection (%s) of:\n%s", what, text);
    if (strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, what))
        fail_msg("message '%s' should start with '%s' and contain '%s'", err, prefix, what);
}

static void test_object_types(void **state)
{
    (void)state;
    obj_bad(HDR "NEW_LIST\nPUSH 1\nADD\nPOP\nHALT\n", "t.stm:5:",
            "ADD needs an int below the top, but it is a list here");
    obj_bad(HDR "PUSH 5\nPUSH 1\nAPPEND\nHALT\n", "t.stm:5:", "APPEND needs a list");
    obj_bad(HDR "NEW_DICT\nPOPITEM\nPOP\nHALT\n", "t.stm:4:", "POPITEM needs a list");
    obj_bad(".global list l\n.expect len(l) = 0\nLOAD_GLOBAL l\nPUSH 2\nMUL\nPOP\nHALT\n",
            "t.stm:5:", "MUL needs an int");
    /* through SWAP and DUP, and on one path of two: still proved on that path */
    obj_bad(HDR "NEW_LIST\nPUSH 1\nSWAP\nDUP\nLEN\nPOP\nPUSH 1\nSUB\nPOP\nPOP\nHALT\n",
            "t.stm:10:", "SUB needs an int below the top, but it is a list");
    /* unknown (a local; paths that disagree): loads, the VM checks at run time */
    char err[512];
    if (load_obj(HDR "LOAD_LOCAL 0\nPUSH 1\nADD\nPOP\nHALT\n", err, sizeof err) != 0)
        fail_msg("a local's type is not known at load time: %s", err);
    if (load_obj(HDR "PUSH 0\nJUMP_IF_TRUE a\nNEW_LIST\nJUMP b\na: PUSH 3\n"
                 "b: PUSH 1\nADD\nPOP\nHALT\n", err, sizeof err) != 0)
        fail_msg("paths that disagree leave the type open: %s", err);
    /* the object model's opcodes need a mode that has objects */
    BAD(HDR "NEW_LIST\nPOP\nHALT\n", 3, "needs the object model");
    BAD(".global list l\n.expect len(l) = 0\nLOAD_GLOBAL l\nPOP\nHALT\n", 3, "--memory");
}

/* A declared queue: shared, of the object model, named only by QUEUE_PUT and
 * QUEUE_GET; its atomic sets and stack effects as a list's LIST_APPEND and LIST_POP. */
static void test_queues(void **state)
{
    (void)state;
    char err[512];
    const char *ok = ".global queue q\n.global int x\n.expect len(q) + sum(q) + q[0] = 0\n"
                     "ATOMIC_BEGIN\nPUSH 300\nQUEUE_PUT q\nQUEUE_GET q\nSTORE_GLOBAL x\n"
                     "ATOMIC_END\nHALT\n";
    struct iv_params obj = params;
    obj.memory = IV_MEM_BUFFERED;
    struct iv_program *p = NULL;
    if (iv_asm_parse(ok, strlen(ok), "t.stm", &obj, &p, err, sizeof err) != 0)
        fail_msg("a queue program should load: %s", err);
    assert_int_equal(p->globals[0].kind, IV_KIND_QUEUE);
    assert_int_equal(p->code[2].op, IV_QUEUE_PUT);
    assert_int_equal(p->code[3].op, IV_QUEUE_GET);
    assert_int_equal(p->atomic_set[0], 3);               /* the section holds q and x */
    assert_string_equal(iv_op_name(IV_QUEUE_GET), "QUEUE_GET");
    iv_program_free(p);
    obj_bad(".per_thread queue q\n.expect len(q) = 0\nHALT\n", "t.stm:1:", "a queue is shared");
    obj_bad(".global queue q\n.expect len(q) = 0\nLOAD_GLOBAL q\nPOP\nHALT\n", "t.stm:3:",
            "'q' is a queue");
    obj_bad(".global list l\n.expect len(l) = 0\nPUSH 1\nQUEUE_PUT l\nHALT\n", "t.stm:4:",
            "QUEUE_PUT needs a queue");
    obj_bad(".global queue q\n.expect len(q) = 0\nPUSH 1\nLIST_APPEND q\nHALT\n", "t.stm:4:",
            "LIST_APPEND needs a list");
    obj_bad(".global queue q\n.expect len(q) = 0\nQUEUE_PUT q\nHALT\n", "t.stm:3:", "");
    obj_bad(".global queue q\n.expect q = 0\nHALT\n", "t.stm:2:", "'q' is a queue");
    BAD(".global queue q\n.expect len(q) = 0\nHALT\n", 1, "needs --memory other than raw");
}

/* A stmdict is a dict to the loader (its instructions, its types), shared, of the
 * object model, marked per_entry. */
static void test_stmdicts(void **state)
{
    (void)state;
    char err[512];
    const char *ok = ".global stmdict d\n.global dict e\n.expect len(d) + sum(d) + d[3] = 0\n"
                     "LOAD_GLOBAL d\nPUSH 3\nPUSH 4\nSETITEM\nPUSH 3\nDICT_GET d\nPOP\nHALT\n";
    struct iv_params obj = params;
    obj.memory = IV_MEM_TRACING;
    struct iv_program *p = NULL;
    if (iv_asm_parse(ok, strlen(ok), "t.stm", &obj, &p, err, sizeof err) != 0)
        fail_msg("a stmdict program should load: %s", err);
    assert_int_equal(p->globals[0].kind, IV_KIND_DICT);
    assert_int_equal(p->globals[0].per_entry, 1);
    assert_int_equal(p->globals[1].per_entry, 0);
    iv_program_free(p);
    obj_bad(".per_thread stmdict d\n.expect len(d) = 0\nHALT\n", "t.stm:1:",
            "a stmdict is shared");
    obj_bad(".global stmdict d\n.expect len(d) = 0\nLOAD_GLOBAL d\nAPPEND\nHALT\n", "t.stm:4:",
            "APPEND");
    obj_bad(".global stmdict d\n.expect len(d) = 0\nPUSH 1\nLIST_APPEND d\nHALT\n", "t.stm:4:",
            "LIST_APPEND needs a list");
    BAD(".global stmdict d\n.expect len(d) = 0\nHALT\n", 1, "needs --memory other than raw");
    BAD(".global stmdic d\n.expect len(d) = 0\nHALT\n", 1, "stmdict");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtins_load),
        cmocka_unit_test(test_object_types),
        cmocka_unit_test(test_queues),
        cmocka_unit_test(test_stmdicts),
        cmocka_unit_test(test_program_files_load),
        cmocka_unit_test(test_unknown_opcode),
        cmocka_unit_test(test_bad_operand),
        cmocka_unit_test(test_underflow),
        cmocka_unit_test(test_jumps),
        cmocka_unit_test(test_unbalanced_atomic),
        cmocka_unit_test(test_missing_empty_binary),
        cmocka_unit_test(test_expressions_and_consts),
        cmocka_unit_test(test_frames_and_atomic_sets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
