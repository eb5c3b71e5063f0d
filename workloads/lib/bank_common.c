/* workloads/lib/bank_common.c - the bank workload's knob table and its accounts'
 * descriptions (bank_common.h). */
#include "workloads/lib/bank_common.h"

#include <stdio.h>
#include <stdlib.h>

const struct wl_knob bank_knobs[BANK_NKNOBS] = {
    [BANK_K_ACCOUNTS] = {.name = "accounts", .type = WL_KNOB_INT, .def = 1024, .min = 2,
                         .max = 1L << 24, .help = "number of accounts"},
    [BANK_K_TRANSFER_PCT] = {.name = "transfer-pct", .type = WL_KNOB_INT, .def = 90, .min = 0,
                             .max = 100,
                             .help = "% of ops that are transfers (the rest audit every account)"},
};

int bank_validate(const struct wl_args *a, char *err, size_t errlen)
{
    (void)a; (void)err; (void)errlen;
    return 0;   /* every knob is checked by its range alone */
}

void bank_describe_account(struct wl_refidx **idx, long naccounts,
                           uint64_t (*ref_of)(const void *arg, long i), const void *arg,
                           uint64_t obj, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!*idx) {                      /* once per run: n log n, then a search per object */
        uint64_t *refs = malloc((size_t)naccounts * sizeof *refs);
        if (!refs)
            return;
        for (long i = 0; i < naccounts; i++)
            refs[i] = ref_of(arg, i);
        *idx = wl_refidx_new(refs, naccounts);
        free(refs);
        if (!*idx)
            return;
    }
    long i = wl_refidx_find(*idx, naccounts, obj);
    if (i >= 0)
        snprintf(buf, n, "account %ld", i);
}
