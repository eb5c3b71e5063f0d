/*
 * workloads/interp/programs.c - the interp workload's built-in programs, as
 * assembler text (format: docs/interp.md). Each thread runs its program over and over;
 * ITER is --iterations, THREADS the thread count, and every `.expect` is checked after
 * the run against RUNS, the number of complete runs (per thread for `.per_thread`
 * objects, all threads together otherwise).
 */
#include "workloads/interp/asm.h"

#include <string.h>

/* Each thread updates only its own objects: nothing is shared, so nothing conflicts. */
static const char iv_prog_counters[] =
    "# counters: every thread increments only its own objects (no sharing)\n"
    ".per_thread int count          # loop iterations done by this thread\n"
    ".per_thread int total          # sum of the loop indexes\n"
    ".expect count = RUNS * ITER\n"
    ".expect total = RUNS * (ITER * (ITER - 1) / 2)\n"
    "        PUSH 0\n"
    "        STORE_LOCAL 0          # i = 0\n"
    "loop:   LOAD_LOCAL 0\n"
    "        PUSH ITER\n"
    "        LT\n"
    "        JUMP_IF_FALSE done     # while i < ITER:\n"
    "        LOAD_GLOBAL count\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        STORE_GLOBAL count     #   count += 1\n"
    "        LOAD_GLOBAL total\n"
    "        LOAD_LOCAL 0\n"
    "        ADD\n"
    "        STORE_GLOBAL total     #   total += i\n"
    "        LOAD_LOCAL 0\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        STORE_LOCAL 0          #   i += 1\n"
    "        JUMP loop\n"
    "done:   HALT\n";

/* Every thread increments one global inside `with atomic:`: the worst case. */
static const char iv_prog_shared_counter[] =
    "# shared-counter: every thread increments one global inside an atomic section\n"
    ".global int counter\n"
    ".expect counter = RUNS * ITER\n"
    "        PUSH 0\n"
    "        STORE_LOCAL 0\n"
    "loop:   LOAD_LOCAL 0\n"
    "        PUSH ITER\n"
    "        LT\n"
    "        JUMP_IF_FALSE done\n"
    "        ATOMIC_BEGIN           # with atomic:\n"
    "        LOAD_GLOBAL counter\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        STORE_GLOBAL counter   #     counter += 1\n"
    "        ATOMIC_END\n"
    "        LOAD_LOCAL 0\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        STORE_LOCAL 0\n"
    "        JUMP loop\n"
    "done:   HALT\n";

/* Appends to one shared list (one bytecode: atomic by itself, as in CPython); when the
 * list is long, a thread flushes it inside an atomic section (checking the length
 * again there: another thread may have flushed it first). */
static const char iv_prog_list_append[] =
    "# list-append: every thread appends to one shared list\n"
    ".global list log\n"
    ".global int flushed            # elements removed by flushes\n"
    ".const FLUSH_AT = 4096\n"
    ".expect len(log) + flushed = RUNS * ITER\n"
    "        PUSH 0\n"
    "        STORE_LOCAL 0\n"
    "loop:   LOAD_LOCAL 0\n"
    "        PUSH ITER\n"
    "        LT\n"
    "        JUMP_IF_FALSE done\n"
    "        LOAD_LOCAL 0\n"
    "        LIST_APPEND log        # log.append(i)\n"
    "        LIST_LEN log\n"
    "        PUSH FLUSH_AT\n"
    "        LT\n"
    "        JUMP_IF_TRUE next      # if len(log) >= FLUSH_AT:\n"
    "        ATOMIC_BEGIN           #     with atomic:\n"
    "        LIST_LEN log\n"
    "        PUSH FLUSH_AT\n"
    "        LT\n"
    "        JUMP_IF_TRUE keep      #         if len(log) >= FLUSH_AT:\n"
    "        LOAD_GLOBAL flushed\n"
    "        LIST_LEN log\n"
    "        ADD\n"
    "        STORE_GLOBAL flushed   #             flushed += len(log)\n"
    "        LIST_CLEAR log         #             log.clear()\n"
    "keep:   ATOMIC_END\n"
    "next:   LOAD_LOCAL 0\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        STORE_LOCAL 0\n"
    "        JUMP loop\n"
    "done:   HALT\n";

/* A realistic shape: a loop calling functions, per-thread containers updated on every
 * item, and a batch of results published to shared totals inside an atomic section
 * every BATCH items. */
static const char iv_prog_mixed[] =
    "# mixed: function calls, loops, per-thread containers, batched shared updates\n"
    ".per_thread dict hist          # key -> how often this thread saw it\n"
    ".per_thread list recent        # recent keys, cleared every KEEP\n"
    ".per_thread int cleared        # how many times `recent` was cleared\n"
    ".per_thread int runs_done\n"
    ".global int total              # items of all threads\n"
    ".global dict by_slot           # (tid % 4) -> items, shared\n"
    ".const NKEYS = 16\n"
    ".const BATCH = 16\n"
    ".const KEEP = 32\n"
    ".expect sum(hist) = RUNS * ITER\n"
    ".expect len(recent) + KEEP * cleared = RUNS * ITER\n"
    ".expect runs_done = RUNS\n"
    ".expect total = RUNS * ITER\n"
    ".expect sum(by_slot) = RUNS * ITER\n"
    "main:   PUSH 0\n"
    "        STORE_LOCAL 0              # i = 0\n"
    "        PUSH 0\n"
    "        STORE_LOCAL 2              # batch = 0\n"
    "loop:   LOAD_LOCAL 0\n"
    "        PUSH ITER\n"
    "        LT\n"
    "        JUMP_IF_FALSE finish\n"
    "        LOAD_LOCAL 0\n"
    "        THREAD_ID\n"
    "        CALL hash 2\n"
    "        STORE_LOCAL 1              # k = hash(i, tid)\n"
    "        LOAD_LOCAL 1\n"
    "        CALL count 1\n"
    "        POP                        # count(k)\n"
    "        LOAD_LOCAL 2\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        DUP\n"
    "        STORE_LOCAL 2              # batch += 1\n"
    "        PUSH BATCH\n"
    "        LT\n"
    "        JUMP_IF_TRUE next\n"
    "        LOAD_LOCAL 2\n"
    "        CALL publish 1\n"
    "        STORE_LOCAL 2              # batch = publish(batch)\n"
    "next:   LOAD_LOCAL 0\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        STORE_LOCAL 0\n"
    "        JUMP loop\n"
    "finish: LOAD_LOCAL 2\n"
    "        CALL publish 1\n"
    "        POP\n"
    "        LOAD_GLOBAL runs_done\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        STORE_GLOBAL runs_done\n"
    "        HALT\n"
    "\n"
    "hash:   # hash(x, y): a key in 0..NKEYS-1\n"
    "        LOAD_LOCAL 0\n"
    "        PUSH 2654435761\n"
    "        MUL\n"
    "        LOAD_LOCAL 1\n"
    "        PUSH 40503\n"
    "        MUL\n"
    "        ADD\n"
    "        PUSH NKEYS\n"
    "        MOD\n"
    "        PUSH NKEYS\n"
    "        ADD\n"
    "        PUSH NKEYS\n"
    "        MOD\n"
    "        RET\n"
    "\n"
    "count:  # count(k): hist[k] += 1; recent.append(k), cleared every KEEP\n"
    "        LOAD_LOCAL 0\n"
    "        LOAD_LOCAL 0\n"
    "        DICT_GET hist\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        DICT_SET hist\n"
    "        LOAD_LOCAL 0\n"
    "        LIST_APPEND recent\n"
    "        LIST_LEN recent\n"
    "        PUSH KEEP\n"
    "        LT\n"
    "        JUMP_IF_TRUE kept\n"
    "        LIST_CLEAR recent\n"
    "        LOAD_GLOBAL cleared\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        STORE_GLOBAL cleared\n"
    "kept:   PUSH 0\n"
    "        RET\n"
    "\n"
    "publish: # publish(n): with atomic: total += n; by_slot[tid % 4] += n. Returns 0.\n"
    "        ATOMIC_BEGIN\n"
    "        LOAD_GLOBAL total\n"
    "        LOAD_LOCAL 0\n"
    "        ADD\n"
    "        STORE_GLOBAL total\n"
    "        THREAD_ID\n"
    "        PUSH 4\n"
    "        MOD\n"
    "        DUP\n"
    "        DICT_GET by_slot\n"
    "        LOAD_LOCAL 0\n"
    "        ADD\n"
    "        DICT_SET by_slot\n"
    "        ATOMIC_END\n"
    "        PUSH 0\n"
    "        RET\n";

/* Threads push tasks to one shared list and pop them (anybody's), computing each with
 * fresh objects; every thread adds its counts to shared totals in one atomic section
 * per run. Object model only. The same program with a declared queue (queue.h) in
 * place of the list is work-queue-q: the same tasks and checks; its get takes the
 * oldest task (the list's pop takes the newest). Its Python: docs/interp.md, "Queues
 * and stmdicts". */
#define IV_WORK_QUEUE(TITLE, KIND, PUT, GET, TAKE)                                        \
    TITLE                                                                                 \
    ".global " KIND " tasks\n"                                                            \
    ".global int processed\n"                                                             \
    ".global int checksum\n"                                                              \
    ".expect processed = RUNS * ITER\n"                                                   \
    ".expect checksum = RUNS * (3 * (1000 * ITER + ITER * (ITER - 1) / 2) + 7 * ITER)\n"  \
    ".expect len(tasks) = 0\n"                                                            \
    "        PUSH 0\n"                                                                    \
    "        STORE_LOCAL 0          # i = 0\n"                                            \
    "fill:   LOAD_LOCAL 0\n"                                                              \
    "        PUSH ITER\n"                                                                 \
    "        LT\n"                                                                        \
    "        JUMP_IF_FALSE work     # for i in range(ITER):\n"                            \
    "        LOAD_LOCAL 0\n"                                                              \
    "        PUSH 1000\n"                                                                 \
    "        ADD\n"                                                                       \
    PUT                                                                                   \
    "        LOAD_LOCAL 0\n"                                                              \
    "        PUSH 1\n"                                                                    \
    "        ADD\n"                                                                       \
    "        STORE_LOCAL 0\n"                                                             \
    "        JUMP fill\n"                                                                 \
    "work:   PUSH 0\n"                                                                    \
    "        STORE_LOCAL 1          # n = 0\n"                                            \
    "        PUSH 0\n"                                                                    \
    "        STORE_LOCAL 2          # s = 0\n"                                            \
    GET                                                                                   \
    "        DUP\n"                                                                       \
    TAKE                                                                                  \
    "        JUMP_IF_FALSE merge    # while t:\n"                                         \
    "        NEW_LIST\n"                                                                  \
    "        DUP\n"                                                                       \
    "        LOAD_LOCAL 3\n"                                                              \
    "        APPEND                 #     pair = [t]\n"                                   \
    "        DUP\n"                                                                       \
    "        LOAD_LOCAL 3\n"                                                              \
    "        PUSH 3\n"                                                                    \
    "        MUL\n"                                                                       \
    "        APPEND                 #     pair.append(t * 3)\n"                           \
    "        PUSH 1\n"                                                                    \
    "        GETITEM\n"                                                                   \
    "        PUSH 7\n"                                                                    \
    "        ADD\n"                                                                       \
    "        LOAD_LOCAL 2\n"                                                              \
    "        ADD\n"                                                                       \
    "        STORE_LOCAL 2          #     s += pair[1] + 7\n"                             \
    "        LOAD_LOCAL 1\n"                                                              \
    "        PUSH 1\n"                                                                    \
    "        ADD\n"                                                                       \
    "        STORE_LOCAL 1          #     n += 1\n"                                       \
    "        JUMP next\n"                                                                 \
    "merge:  ATOMIC_BEGIN           # with atomic:\n"                                     \
    "        LOAD_GLOBAL processed\n"                                                     \
    "        LOAD_LOCAL 1\n"                                                              \
    "        ADD\n"                                                                       \
    "        STORE_GLOBAL processed #     processed += n\n"                               \
    "        LOAD_GLOBAL checksum\n"                                                      \
    "        LOAD_LOCAL 2\n"                                                              \
    "        ADD\n"                                                                       \
    "        STORE_GLOBAL checksum  #     checksum += s\n"                                \
    "        ATOMIC_END\n"                                                                \
    "        HALT\n"
static const char iv_prog_work_queue[] = IV_WORK_QUEUE(
    "# work-queue: threads push tasks to a shared list and pop them, computing with fresh objects\n",
    "list", "        LIST_APPEND tasks      #     tasks.append(1000 + i)\n",
    "next:   LIST_POP tasks\n", "        STORE_LOCAL 3          # t = tasks.pop() (0 when empty)\n");
static const char iv_prog_work_queue_q[] = IV_WORK_QUEUE(
    "# work-queue-q: work-queue with a shared queue (pypystm.queue, queue.Queue)\n",
    "queue", "        QUEUE_PUT tasks        #     tasks.put(1000 + i)\n",
    "next:   QUEUE_GET tasks\n", "        STORE_LOCAL 3          # t = tasks.get() (0 when empty)\n");
#undef IV_WORK_QUEUE

/* Each thread maps i -> i*i into a private list it made, then merges the list into
 * shared totals in one atomic section. Object model only. */
static const char iv_prog_parallel_map[] =
    "# parallel-map: private result lists, merged in one atomic section\n"
    ".global int total\n"
    ".global int count\n"
    ".expect count = RUNS * ITER\n"
    ".expect total = RUNS * ((ITER - 1) * ITER * (2 * ITER - 1) / 6)\n"
    "        NEW_LIST\n"
    "        STORE_LOCAL 1          # mine = []\n"
    "        PUSH 0\n"
    "        STORE_LOCAL 0          # i = 0\n"
    "map:    LOAD_LOCAL 0\n"
    "        PUSH ITER\n"
    "        LT\n"
    "        JUMP_IF_FALSE merge    # for i in range(ITER):\n"
    "        LOAD_LOCAL 1\n"
    "        LOAD_LOCAL 0\n"
    "        DUP\n"
    "        MUL\n"
    "        APPEND                 #     mine.append(i * i)\n"
    "        LOAD_LOCAL 0\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        STORE_LOCAL 0\n"
    "        JUMP map\n"
    "merge:  ATOMIC_BEGIN           # with atomic:\n"
    "        PUSH 0\n"
    "        STORE_LOCAL 0\n"
    "sum:    LOAD_LOCAL 0\n"
    "        LOAD_LOCAL 1\n"
    "        LEN\n"
    "        LT\n"
    "        JUMP_IF_FALSE end      #     for x in mine:\n"
    "        LOAD_GLOBAL total\n"
    "        LOAD_LOCAL 1\n"
    "        LOAD_LOCAL 0\n"
    "        GETITEM\n"
    "        ADD\n"
    "        STORE_GLOBAL total     #         total += x\n"
    "        LOAD_LOCAL 0\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        STORE_LOCAL 0\n"
    "        JUMP sum\n"
    "end:    LOAD_GLOBAL count\n"
    "        LOAD_LOCAL 1\n"
    "        LEN\n"
    "        ADD\n"
    "        STORE_GLOBAL count     #     count += len(mine)\n"
    "        ATOMIC_END\n"
    "        HALT\n";

/* A shared dict memoises an expensive function of 64 keys: inserts only while it
 * fills (the first runs), reads ever after. The value is used in arithmetic (a fresh
 * box, as in Python), so the loop allocates about one object per 8 bytecodes.
 * Object model only.
 * memo-cache-sd is the same program with `cache` a stmdict (sdict.h): under stm its
 * inserts of different keys do not conflict. */
#define IV_MEMO_CACHE(TITLE, KIND)                                                                               \
    TITLE                                                                                                        \
    ".global " KIND " cache\n"                                                                                   \
    ".per_thread int got\n"                                                                                      \
    ".const Q = ITER / 64\n"                                                                                     \
    ".const R = ITER % 64\n"                                                                                     \
    ".expect got = RUNS * 2 * (Q * (1000 * 85344 + 7 * 64) + 1000 * ((R - 1) * R * (2 * R - 1) / 6) + 7 * R)\n"  \
    "        PUSH 0\n"                                                                                           \
    "        STORE_LOCAL 0          # i = 0\n"                                                                   \
    "        PUSH 0\n"                                                                                           \
    "        STORE_LOCAL 1          # acc = 0\n"                                                                 \
    "loop:   LOAD_LOCAL 0\n"                                                                                     \
    "        PUSH ITER\n"                                                                                        \
    "        LT\n"                                                                                               \
    "        JUMP_IF_FALSE done     # for i in range(ITER):\n"                                                   \
    "        LOAD_LOCAL 0\n"                                                                                     \
    "        PUSH 64\n"                                                                                          \
    "        MOD\n"                                                                                              \
    "        STORE_LOCAL 2          #     k = i % 64\n"                                                          \
    "        LOAD_GLOBAL cache\n"                                                                                \
    "        LOAD_LOCAL 2\n"                                                                                     \
    "        CONTAINS\n"                                                                                         \
    "        JUMP_IF_TRUE hit       #     if k not in cache:\n"                                                  \
    "        LOAD_GLOBAL cache\n"                                                                                \
    "        LOAD_LOCAL 2\n"                                                                                     \
    "        LOAD_LOCAL 2\n"                                                                                     \
    "        CALL slow 1\n"                                                                                      \
    "        SETITEM                #         cache[k] = slow(k)\n"                                              \
    "hit:    LOAD_LOCAL 1\n"                                                                                     \
    "        LOAD_GLOBAL cache\n"                                                                                \
    "        LOAD_LOCAL 2\n"                                                                                     \
    "        GETITEM\n"                                                                                          \
    "        PUSH 2\n"                                                                                           \
    "        MUL\n"                                                                                              \
    "        ADD\n"                                                                                              \
    "        STORE_LOCAL 1          #     acc += cache[k] * 2\n"                                                 \
    "        LOAD_LOCAL 0\n"                                                                                     \
    "        PUSH 1\n"                                                                                           \
    "        ADD\n"                                                                                              \
    "        STORE_LOCAL 0\n"                                                                                    \
    "        JUMP loop\n"                                                                                        \
    "done:   LOAD_GLOBAL got\n"                                                                                  \
    "        LOAD_LOCAL 1\n"                                                                                     \
    "        ADD\n"                                                                                              \
    "        STORE_GLOBAL got       # got += acc\n"                                                              \
    "        HALT\n"                                                                                             \
    "# slow(k) = k * k * 1000 + 7, by repeated addition: what the cache saves\n"                                 \
    "slow:   PUSH 0\n"                                                                                           \
    "        STORE_LOCAL 1          # r = 0\n"                                                                   \
    "        PUSH 0\n"                                                                                           \
    "        STORE_LOCAL 2          # j = 0\n"                                                                   \
    "sl:     LOAD_LOCAL 2\n"                                                                                     \
    "        LOAD_LOCAL 0\n"                                                                                     \
    "        LOAD_LOCAL 0\n"                                                                                     \
    "        MUL\n"                                                                                              \
    "        LT\n"                                                                                               \
    "        JUMP_IF_FALSE sd       # for j in range(k * k):\n"                                                  \
    "        LOAD_LOCAL 1\n"                                                                                     \
    "        PUSH 1000\n"                                                                                        \
    "        ADD\n"                                                                                              \
    "        STORE_LOCAL 1          #     r += 1000\n"                                                           \
    "        LOAD_LOCAL 2\n"                                                                                     \
    "        PUSH 1\n"                                                                                           \
    "        ADD\n"                                                                                              \
    "        STORE_LOCAL 2\n"                                                                                    \
    "        JUMP sl\n"                                                                                          \
    "sd:     LOAD_LOCAL 1\n"                                                                                     \
    "        PUSH 7\n"                                                                                           \
    "        ADD\n"                                                                                              \
    "        RET\n"
static const char iv_prog_memo_cache[] = IV_MEMO_CACHE(
    "# memo-cache: a read-mostly shared dict used as a cache\n", "dict");
static const char iv_prog_memo_cache_sd[] = IV_MEMO_CACHE(
    "# memo-cache-sd: memo-cache with a stmdict (pypystm.stmdict; a dict for CPython)\n",
    "stmdict");
#undef IV_MEMO_CACHE

/* Pure arithmetic whose results are outside the small ints: most bytecodes allocate;
 * threads share only the constants and one global they read. Object model only. */
static const char iv_prog_arith[] =
    "# arith: arithmetic that allocates on most bytecodes, sharing only constants and a global\n"
    ".global int scale = 1000\n"
    ".per_thread int total\n"
    ".expect total = RUNS * (1000 * (ITER * (ITER - 1) / 2) + 12345 * ITER)\n"
    "        PUSH 0\n"
    "        STORE_LOCAL 0          # i = 0\n"
    "        PUSH 0\n"
    "        STORE_LOCAL 1          # acc = 0\n"
    "loop:   LOAD_LOCAL 0\n"
    "        PUSH ITER\n"
    "        LT\n"
    "        JUMP_IF_FALSE done     # for i in range(ITER):\n"
    "        LOAD_LOCAL 0\n"
    "        LOAD_GLOBAL scale\n"
    "        MUL\n"
    "        PUSH 12345\n"
    "        ADD\n"
    "        STORE_LOCAL 2          #     a = i * scale + 12345\n"
    "        LOAD_LOCAL 2\n"
    "        PUSH 3\n"
    "        MUL\n"
    "        LOAD_LOCAL 2\n"
    "        SUB\n"
    "        LOAD_LOCAL 2\n"
    "        SUB\n"
    "        LOAD_LOCAL 1\n"
    "        ADD\n"
    "        STORE_LOCAL 1          #     acc += (a * 3 - a) - a\n"
    "        LOAD_LOCAL 0\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        STORE_LOCAL 0\n"
    "        JUMP loop\n"
    "done:   LOAD_GLOBAL total\n"
    "        LOAD_LOCAL 1\n"
    "        ADD\n"
    "        STORE_GLOBAL total     # total += acc\n"
    "        HALT\n";

/* A read-mostly setting: thread 0 rewrites it on every item (in `update`), every other
 * thread reads it on every item (in `lookup`) and counts the lookup in a shared counter
 * of its own (`seen1` for thread 1, `seen2` for the others), so its commits validate
 * (a commit that wrote only the thread's own objects would not): the writer and the
 * readers conflict at two lines of two functions (conflict analysis's read-write case). */
static const char iv_prog_read_mostly[] =
    "# read-mostly: thread 0 rewrites a shared setting that the other threads read\n"
    ".global int setting            # written by thread 0 only, in update\n"
    ".global int updates            # updates done (thread 0)\n"
    ".global int seen1              # lookups done by thread 1\n"
    ".global int seen2              # lookups done by threads 2 and up\n"
    ".expect updates + seen1 + seen2 = RUNS * ITER\n"
    ".expect setting = ITER - 1\n"
    "        PUSH 0\n"
    "        STORE_LOCAL 0          # i = 0\n"
    "loop:   LOAD_LOCAL 0\n"
    "        PUSH ITER\n"
    "        LT\n"
    "        JUMP_IF_FALSE done     # while i < ITER:\n"
    "        THREAD_ID\n"
    "        JUMP_IF_TRUE reader    #   thread 0 writes, the others read\n"
    "        LOAD_LOCAL 0\n"
    "        CALL update 1\n"
    "        POP                    #   update(i)\n"
    "        JUMP next\n"
    "reader: CALL lookup 0\n"
    "        POP                    #   lookup()\n"
    "next:   LOAD_LOCAL 0\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        STORE_LOCAL 0          #   i += 1\n"
    "        JUMP loop\n"
    "done:   HALT\n"
    "\n"
    "update: # update(v): setting = v; updates += 1\n"
    "        LOAD_LOCAL 0\n"
    "        STORE_GLOBAL setting\n"
    "        LOAD_GLOBAL updates\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        STORE_GLOBAL updates\n"
    "        PUSH 0\n"
    "        RET\n"
    "\n"
    "lookup: # lookup(): n = 1 if setting >= 0 (it always is); seen1 or seen2 += n\n"
    "        LOAD_GLOBAL setting\n"
    "        PUSH 0\n"
    "        LT\n"
    "        NOT\n"
    "        STORE_LOCAL 0\n"
    "        THREAD_ID\n"
    "        PUSH 1\n"
    "        EQ\n"
    "        JUMP_IF_FALSE other\n"
    "        LOAD_GLOBAL seen1\n"
    "        LOAD_LOCAL 0\n"
    "        ADD\n"
    "        STORE_GLOBAL seen1\n"
    "        PUSH 0\n"
    "        RET\n"
    "other:  ATOMIC_BEGIN           # threads 2 and up share seen2\n"
    "        LOAD_GLOBAL seen2\n"
    "        LOAD_LOCAL 0\n"
    "        ADD\n"
    "        STORE_GLOBAL seen2\n"
    "        ATOMIC_END\n"
    "        PUSH 0\n"
    "        RET\n";

const char *const iv_builtin_names[] = { "counters", "shared-counter", "list-append", "mixed",
                                         "work-queue", "parallel-map", "memo-cache", "arith",
                                         "read-mostly", "work-queue-q", "memo-cache-sd",
                                         NULL };
static const char *const iv_builtin_texts[] = { iv_prog_counters, iv_prog_shared_counter,
                                                iv_prog_list_append, iv_prog_mixed,
                                                iv_prog_work_queue, iv_prog_parallel_map,
                                                iv_prog_memo_cache, iv_prog_arith,
                                                iv_prog_read_mostly, iv_prog_work_queue_q,
                                                iv_prog_memo_cache_sd };

const char *iv_builtin_text(const char *name)
{
    for (int i = 0; iv_builtin_names[i]; i++)
        if (strcmp(iv_builtin_names[i], name) == 0)
            return iv_builtin_texts[i];
    return NULL;
}
