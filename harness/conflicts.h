/*
 * harness/conflicts.h - conflict analysis after a run (docs/contract.md, "Conflict
 * log" and "--report"): the workload's descriptions of every conflict row's locations
 * and object, and the summary `--report` prints: the conflict pairs ranked by time lost,
 * and the contended locks ranked by time waited.
 */
#ifndef HARNESS_CONFLICTS_H
#define HARNESS_CONFLICTS_H

#include "runtime/common.h"
#include "workloads/workload.h"

#include <stdio.h>

/* Fills where_s, other_where_s and object_s of every row of s from the workload's
 * describe hooks (each distinct location or object described once; the strings live
 * until conflicts_release). Call on the main thread entered in the runtime, after the
 * check and before the teardown. Rows of a workload without hooks keep NULL. */
void conflicts_describe(const struct workload *wl, void *ctx, struct sync_stats *s);
void conflicts_release(void);

/* How many pairs --report prints. */
#define CONFLICTS_REPORT_TOP 5

/* Prints the report of s's rows: the `top` abort pairs (kind, object, both sides) by
 * time lost, each with its count, its time, both locations and one line of advice;
 * then, if there are waits (kind lock-wait), the `top` contended locks by time waited,
 * each with its count, its time, its most waited pair (the waiter's and the holder's
 * sites and locations, the pair's own count and time) and one line of advice. The
 * figures are those of the conflict CSV's rows: counts are sums of `weight`, times
 * sums of `wasted_ns` (tests/test_conflicts_report.sh recomputes them). */
void conflicts_report(FILE *f, const struct sync_stats *s, const char *runtime,
                      const char *workload, int threads, int top);

#endif
