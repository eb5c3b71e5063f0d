/* workloads/lib/bank_common.c - the bank workload's knob table (bank_common.h). */
#include "workloads/lib/bank_common.h"

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
