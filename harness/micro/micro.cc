// harness/micro/micro.cc - the google-benchmark driver of `make micro`.
//
// Registers one benchmark "<op>/<runtime>" for every operation a runtime's shim
// table offers (harness/micro/shim.c, compiled once per runtime of the list
// runtime/runtimes.h that has atomic blocks of its own), grouped by
// operation so each row sits beside its seq baseline. Times are the shim's manual
// timings (UseManualTime): nanoseconds per iteration of the measured part only.
// A runtime whose setup fails (e.g. a runtime that is not built yet) is reported
// with SkipWithError and its reason, never with made-up numbers.
//
// Usage: micro [google-benchmark flags], e.g. --benchmark_filter=stm
//        --benchmark_out=FILE --benchmark_out_format=json (scripts/micro.sh does this)

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "harness/micro/shim.h"

namespace {

void run_op(benchmark::State &state, const micro_rt *rt, const micro_op *op)
{
    if (rt->setup() != 0) {
        state.SkipWithError(rt->error());
        return;
    }
    while (state.KeepRunningBatch(static_cast<benchmark::IterationCount>(op->batch))) {
        int64_t ns = op->run(op->batch);
        if (ns < 0) {
            state.SkipWithError(rt->error());
            break;
        }
        state.SetIterationTime(static_cast<double>(ns) * 1e-9);
    }
    state.SetLabel(op->what);
}

}  // namespace

int main(int argc, char **argv)
{
    // Every runtime of the list whose shim is linked in (weak: a variant runtime has
    // no shim, an optional one may not be built), in the list's order.
    std::vector<const micro_rt *> rts;
#define MICRO_RT(a, name, build) \
    if (micro_rt_##name)         \
        rts.push_back(micro_rt_##name());
    SYNC_RUNTIMES(MICRO_RT, )
#undef MICRO_RT

    // Operation names in first-seen order, so rows group by operation.
    std::vector<std::string> names;
    for (const micro_rt *rt : rts)
        for (int i = 0; i < rt->nops; i++) {
            bool seen = false;
            for (const std::string &n : names)
                seen = seen || n == rt->ops[i].name;
            if (!seen)
                names.push_back(rt->ops[i].name);
        }

    for (const std::string &name : names)
        for (const micro_rt *rt : rts)
            for (int i = 0; i < rt->nops; i++) {
                const micro_op *op = &rt->ops[i];
                if (name != op->name)
                    continue;
                std::string bname = name + "/" + rt->name;
                benchmark::RegisterBenchmark(bname.c_str(), run_op, rt, op)
                    ->UseManualTime()
                    ->Unit(benchmark::kNanosecond);
            }

    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 2;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
