/*
 * harness/columns.h - the columns of the results files, in file order: the one list.
 *
 * harness/results.c writes the headers from it (and its rows in the same order);
 * scripts/stmbench reads this file (stmbench.lists.columns), so the report needs no
 * copy; docs/contract.md's tables and tests/test_csv.c are checked against it by
 * tests/python/test_columns.py. Adding a column: a line at the end of its list, the
 * value at the end of results.c's row, a row in docs/contract.md's table.
 *
 * RESULTS_COLUMNS(X, a) expands X(a, name, kind) per column of the runs CSV (--csv):
 *   name   the column's header
 *   kind   req: in every runs CSV since the first: the report refuses a file without
 *               it (the first 25, which never change)
 *          opt: added later, at the end: an older file may lack it and still loads
 * CONFLICT_COLUMNS(X, a) likewise for the conflict log (--conflicts); its opt columns
 * are the conflict analysis's (the report gives a file without them its older tables).
 */
#ifndef HARNESS_COLUMNS_H
#define HARNESS_COLUMNS_H

#define RESULTS_COLUMNS(X, a) \
    X(a, run_id, req) \
    X(a, timestamp, req) \
    X(a, git_rev, req) \
    X(a, host, req) \
    X(a, runtime, req) \
    X(a, workload, req) \
    X(a, params, req) \
    X(a, threads, req) \
    X(a, pin, req) \
    X(a, seed, req) \
    X(a, duration_s, req) \
    X(a, ops, req) \
    X(a, ops_per_s, req) \
    X(a, commits, req) \
    X(a, aborts, req) \
    X(a, aborts_write_write, req) \
    X(a, aborts_read_write, req) \
    X(a, aborts_other, req) \
    X(a, unshared_pages, req) \
    X(a, commit_p50_ns, req) \
    X(a, commit_p99_ns, req) \
    X(a, block_p50_ns, req) \
    X(a, block_p99_ns, req) \
    X(a, check, req) \
    X(a, cpus, req) \
    X(a, aborts_inevitable, opt) \
    X(a, inevitable, opt) \
    X(a, ops_per_tx, opt) \
    X(a, gil_handoffs, opt) \
    X(a, gil_wait_ns, opt) \
    X(a, block_mean_ns, opt) \
    X(a, import_entries, opt) \
    X(a, import_bytes, opt) \
    X(a, pages_faulted, opt) \
    X(a, htm_commits, opt) \
    X(a, htm_aborts_conflict, opt) \
    X(a, htm_aborts_capacity, opt) \
    X(a, htm_aborts_explicit, opt) \
    X(a, thread_time_ns, opt) \
    X(a, time_outside_ns, opt) \
    X(a, time_work_ns, opt) \
    X(a, time_wasted_ns, opt) \
    X(a, time_begin_ns, opt) \
    X(a, time_validate_ns, opt) \
    X(a, time_wait_lock_ns, opt) \
    X(a, time_publish_ns, opt) \
    X(a, time_unshare_ns, opt) \
    X(a, time_wait_owner_ns, opt) \
    X(a, time_wait_inevitable_ns, opt) \
    X(a, time_wait_gil_ns, opt) \
    X(a, time_handoff_ns, opt) \
    X(a, op_p50_ns, opt) \
    X(a, op_p99_ns, opt) \
    X(a, op_p99_9_ns, opt) \
    X(a, op_p99_99_ns, opt) \
    X(a, op_max_ns, opt) \
    X(a, tx_len_mean, opt) \
    X(a, tx_len_p50, opt) \
    X(a, tx_len_p99, opt) \
    X(a, op_p99_999_ns, opt) \
    X(a, op_stalls, opt) \
    X(a, objects_allocated, opt) \
    X(a, objects_freed, opt)

#define CONFLICT_COLUMNS(X, a) \
    X(a, run_id, req) \
    X(a, t_ns, req) \
    X(a, thread, req) \
    X(a, other_thread, req) \
    X(a, kind, req) \
    X(a, object, req) \
    X(a, page, req) \
    X(a, site, req) \
    X(a, wasted_ns, req) \
    X(a, where, opt) \
    X(a, other_site, opt) \
    X(a, other_where, opt) \
    X(a, object_name, opt) \
    X(a, weight, opt)

/* "," name for each column: a header is the expansion without its first comma. */
#define COLUMNS_HEADER_ITEM(a, name, kind) "," #name
/* 1 per column: the count as an expression. */
#define COLUMNS_COUNT_ITEM(a, name, kind) +1

#endif
