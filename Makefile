# stmbench - Makefile
#
# Options (make VAR=value):
#   CC=clang|gcc        compiler (default clang; gcc builds it too)
#   MODE=release|debug  release: -O2 (default); debug: -O0 and the STM's invariant
#                       asserts (DWARF 4 debug info in both: valgrind 3.19 cannot
#                       read the DWARF 5 that clang 14 emits)
#   SAN=address|undefined|thread   build with that sanitizer (tests only make sense
#                       with address/undefined; the STM's %gs tricks confuse thread)
#   BUILD=dir           output folder (default: one per configuration, below)
#   V=1                 show full compiler command lines
#   ITM_CC=gcc          compiler of the `itm` runtime's copies (GCC's libitm, -fgnu-tm)
#   ITM=0               leave the itm runtime out
#   TIMEACCT=0          compile the time breakdown's hooks out (runtime/timeacct.h;
#                       for measuring its overhead: the time_* and op_* columns read 0)
#   WHERE=0             compile conflict analysis's location stores out (the interp
#                       VM's pc store; gil's and mutex's wait rows and their tests at
#                       block ends; for measuring their cost: the where columns empty)
#
# Targets:
#   make            BUILD/stmbench, the libraries and the tests
#   make test       unit, protocol, build and stress tests (short); ends with
#                   "tests: N passed, M failed"
#   make bench      the sweep into results/bench/<machine>-<cores>c-<date-time>/, linked
#                   from results/latest (BENCH_DURATION BENCH_REPEAT BENCH_THREADS
#                   BENCH_OVERSUB BENCH_RUNTIMES BENCH_WORKLOADS ...: docs/contract.md),
#                   with one oversubscribed point (2 x the hardware threads)
#   make interp-memory  interp's object model in every memory mode and runtime, 1 and
#                   2 threads (scripts/interp-memory.sh) into INTERP_OUT (results/latest)
#   make anchors    the model against the real interpreters: interp's object-model
#                   programs as Python under /usr/bin/python3 and pypy3 (where found)
#                   beside gil --memory refcount, 1 and 2 threads (scripts/anchors.sh;
#                   ANCHORS_* variables: docs/anchors.md) into ANCHORS_OUT (results/latest)
#   make memcheck   interp's memory bounded: 30 s runs at 2 threads in every runtime and
#                   memory mode, RSS at the end at most 2x at 5 s (scripts/interp-rss.sh)
#   make stress     long randomized + chaos stress of every runtime (minutes)
#   make plots      redraw figures from results/latest/*.csv (PLOTS_DIR=dir: dir/*.csv)
#   make report RESULTS="dir1 dir2 ..."   several machines' bench folders in one report
#                   (REPORT_OUT, default results/report/: machines.md, machines.csv,
#                   plots/speedup_<w>); scripts/stmbench machines
#   make pack       results/latest (or RESULTS=dir) as a tarball to send back
#                   (results/stmbench-<folder>.tar.gz, or PACK=file);
#                   docs/results.md
#   make scaling    T threads over 1, per runtime, in one sitting (SCALE_*: docs/contract.md)
#   make micro      google-benchmark micro-benchmarks (C++ shim over the C runtimes)
#   make regress    the current tree against the baseline revision (results/baseline's
#                   git_rev, built from history in $(BUILD)/regress/), interleaved A/B
#   make regress-history  the same, appending the verdict to results/history.csv
#                   (REGRESS_HISTORY=file: to that file)
#   make fuzz       the interp's two libFuzzer targets (clang, ASan, UBSan; FUZZ_CC):
#                   BUILD/fuzz/fuzz_asm (the loader alone) and BUILD/fuzz/fuzz_run
#                   (what loads runs under seq, .expect evaluated), FUZZ_SECONDS in all
#                   (or FUZZ_RUNS each), FUZZ_JOBS; a crash is a file in
#                   BUILD/fuzz/artifacts/ and exit 1 (scripts/fuzz.sh, docs/interp.md).
#                   make fuzz-build only builds them
#   make mutants    one synchronisation point at a time removed or weakened in each
#                   workload's variants, each rebuilt and run: how many the checks
#                   catch (scripts/stmbench mutants; MUTANTS_* variables; about 7 minutes)
#   make deps       check (and as root install) the Debian packages needed
#   make clean      remove BUILD (by default: every configuration under build/)
#
# CI (.ci/run) runs make test and make regress, then scripts/ci-smoke.sh: every other
# target above for seconds, into a temporary folder, failing on a broken one.
#
# The htm runtime (the GIL elided with Intel RTM) is always built; where the CPU has no
# working RTM, `--runtime htm` exits 3, make bench and make regress skip it (one line
# in their log) and tests/test_htm.c skips what needs RTM.
#
# One folder per configuration: build/<MODE>[-<SAN>][-<CC>] (build/release,
# build/debug, build/release-address, build/release-gcc...; the compiler is named
# unless it is clang), so switching MODE, SAN or CC never mixes objects of two
# configurations. build/stmbench is a link to build/release/stmbench, the default
# configuration's binary. Within a folder every object also depends on
# BUILD/flags, rewritten whenever a compiler or flag differs from the last build
# there (BUILD=dir, CFLAGS=..., ITM=0...), so no object of other flags survives a
# rebuild; the flags are also recorded in each object (-grecord-gcc-switches: DWARF
# DW_AT_producer) and in the results (BUILD/buildinfo.h, the context JSON).
#
# Dependencies: every goal but deps, clean, plots, report and pack first runs
# scripts/deps.sh (as root it installs what is missing; otherwise it prints the apt-get
# line and make stops before compiling anything).
#
# Runtimes and workloads come from runtime/runtimes.h (the one list). Every
# workload in workloads/<w>.c is compiled once per runtime of build `cc` with
# -DSYNC_RT=<rt> -DSYNC_RT_<RT> (BUILD/obj/<rt>/workloads/<w>.o, plus RT_CFLAGS_<rt>
# when a runtime needs flags of its own), and for a runtime of build `variant` its
# workloads/<w>_<rt>.c instead. Everything else once (BUILD/obj/common/).
#
# The itm runtime (build `gnutm`, GCC's libitm): whatever CC is, the workloads are
# compiled once more by ITM_CC with -fgnu-tm (BUILD/obj/itm/...; clang has no
# -fgnu-tm), and everything is linked with ITM_CC's libitm.so (rpath to its
# directory). At parse time the Makefile compiles and links a one-line transaction
# with ITM_CC; if that fails (no gcc, or no libitm: Debian's libitm1 and gcc's
# libitm.so link), or with ITM=0, or with any SAN (gcc 12 refuses -fgnu-tm with
# address and crashes in its TM pass with undefined and thread), the itm copies,
# runtime/itm/ and tests/test_itm.c are left out and the rest builds as before:
# `stmbench --list` then has no itm (its descriptor and copies are weak symbols).

ifeq ($(origin CC),default)
CC := clang
endif
ifeq ($(origin CXX),default)
CXX := $(if $(findstring clang,$(CC)),clang++,g++)
endif
MODE ?= release
SAN ?=
Q := $(if $(V),,@)

ifeq ($(MODE),release)
# -falign-loops=32: every loop head starts a 32-byte fetch block, so where a hot loop
# lands no longer depends on the code before it. Without it, the gil copy of interp's
# dispatch loop (the same instructions as seq's, at another address) had its head 48
# bytes into a 64-byte line and ran far slower than seq's with equal callgrind counts;
# with it the two run alike (docs/figures.md, "How to read them"). (64 served too, but
# its padding nops run at every entry to a short inner loop: more instructions per
# hashmap operation; commit 4b4c337 has the count.)
OPTFLAGS := -O2 -falign-loops=32 -gdwarf-4 -grecord-gcc-switches
else ifeq ($(MODE),debug)
# STMBENCH_DEBUG: the STM's invariant asserts (STM_ASSERT, runtime/stm/stm_internal.h)
OPTFLAGS := -O0 -g3 -gdwarf-4 -grecord-gcc-switches -DSTMBENCH_DEBUG
else
$(error MODE must be release or debug, not '$(MODE)')
endif
ifneq ($(SAN),)
ifeq ($(filter $(SAN),address undefined thread),)
$(error SAN must be address, undefined or thread, not '$(SAN)')
endif
SANFLAGS := -fsanitize=$(SAN) -fno-omit-frame-pointer
endif

CONFIG := $(MODE)$(if $(SAN),-$(SAN))$(if $(findstring clang,$(notdir $(CC))),,-$(notdir $(CC)))
ifeq ($(origin BUILD),undefined)
BUILD := build/$(CONFIG)
BUILD_IS_DEFAULT := 1
endif

# ---- dependencies first (see the header comment); sub-makes inherit the verdict
ifneq ($(filter-out deps clean plots report pack,$(or $(MAKECMDGOALS),all)),)
ifneq ($(STMBENCH_DEPS_OK),1)
ifneq ($(shell scripts/deps.sh >&2 && echo ok),ok)
$(error missing Debian packages (above); nothing was compiled)
endif
export STMBENCH_DEPS_OK := 1
endif
endif

WARN := -Wall -Wextra -Werror -Wno-unused-parameter
# gcc's -Wclobbered flags every local assigned inside an stm atomic block (the block
# is a setjmp point). runtime/sync.h makes it a rule that such locals are only assigned
# (never updated) inside a block, so each run of the block sets them afresh; the
# macro's own variables are never written between its setjmp and a jump back.
ifneq ($(findstring gcc,$(notdir $(CC))),)
WARN += -Wno-clobbered
endif
CPPFLAGS += -I. -D_GNU_SOURCE
ifeq ($(WHERE),0)
CPPFLAGS += -DSTMBENCH_WHERE=0
endif
ifeq ($(TIMEACCT),0)
CPPFLAGS += -DSTMBENCH_TIMEACCT=0
endif
CFLAGS += -std=gnu11 $(WARN) $(OPTFLAGS) $(SANFLAGS) -pthread -MMD -MP
CXXFLAGS += -std=c++17 -Wall -Wextra -Werror $(OPTFLAGS) $(SANFLAGS) -pthread -MMD -MP
LDFLAGS += $(SANFLAGS) -pthread
LDLIBS += -lhwloc -lm
# The plain runtimes (seq, mutex, gil, locks) allocate with mimalloc, except under a
# sanitizer, whose own malloc must see every object (runtime/plain_heap.h).
ifeq ($(SAN),)
CPPFLAGS += -DSYNC_PLAIN_MIMALLOC
LDLIBS += -lmimalloc
endif

# ---- the itm runtime: is it buildable here? (see the header comment)
ITM_CC ?= gcc
ITM ?= 1
ifneq ($(SAN),)
override ITM := 0
endif
ifeq ($(ITM),1)
ITM_PROBE := $(shell printf 'int x; int main(void) { __transaction_relaxed { x++; } return x - 1; }\n' | \
	$(ITM_CC) -fgnu-tm -x c - -o /dev/null >/dev/null 2>&1 && echo ok)
ITM_LIB := $(realpath $(shell $(ITM_CC) -print-file-name=libitm.so 2>/dev/null))
ifneq ($(and $(ITM_PROBE),$(ITM_LIB)),)
ITM_LDLIBS := $(ITM_LIB) -Wl,-rpath,$(dir $(ITM_LIB))
else
ITM := 0
endif
endif

# ---- the lists (runtime/runtimes.h): "name:build" per runtime, and the workloads
# awk: the X(a, ...) lines of `#define <name>(X, a)` up to its last continued line
LIST_AWK := /^\#define NAME[(]/ { on = 1; next } \
	on { more = /\\$$/; if (sub(/^.*X[(]a, */, "")) { sub(/[)].*$$/, ""); gsub(/, */, ":"); print } \
	     on = more }
list_of = $(shell awk '$(subst NAME,$(1),$(LIST_AWK))' runtime/runtimes.h)
RT_LIST := $(call list_of,SYNC_RUNTIMES)
WORKLOADS := $(call list_of,SYNC_WORKLOADS)
ifeq ($(and $(RT_LIST),$(WORKLOADS)),)
$(error runtime/runtimes.h: no SYNC_RUNTIMES or SYNC_WORKLOADS entries found)
endif
rt_of = $(patsubst %:$(1),%,$(filter %:$(1),$(RT_LIST)))
RT_CC := $(call rt_of,cc)
RT_VARIANT := $(call rt_of,variant)
RT_GNUTM := $(if $(filter 1,$(ITM)),$(call rt_of,gnutm))
upper = $(shell echo $(1) | tr a-z A-Z)
# -DSYNC_RT=<rt> selects the runtime's header (runtime/sync.h); -DSYNC_RT_<RT> is for
# code that differs per runtime under #if.
rt_defs = -DSYNC_RT=$(1) -DSYNC_RT_$(call upper,$(1))

WL_SRCS := $(WORKLOADS:%=workloads/%.c)
WL_OBJS := $(foreach rt,$(RT_CC) $(RT_GNUTM),$(WL_SRCS:%.c=$(BUILD)/obj/$(rt)/%.o)) \
           $(foreach rt,$(RT_VARIANT),$(patsubst %.c,$(BUILD)/obj/$(rt)/%.o, \
                $(wildcard $(WORKLOADS:%=workloads/%_$(rt).c))))
COMMON_SRCS := $(wildcard runtime/*.c runtime/*/*.c workloads/lib/*.c workloads/interp/*.c) \
               $(filter-out harness/main.c,$(wildcard harness/*.c))
COMMON_SRCS := $(filter-out $(foreach rt,$(call rt_of,gnutm),runtime/$(rt)/%),$(COMMON_SRCS)) \
               $(foreach rt,$(RT_GNUTM),$(wildcard runtime/$(rt)/*.c))
COMMON_OBJS := $(patsubst %.c,$(BUILD)/obj/common/%.o,$(sort $(COMMON_SRCS)))
ifeq ($(ITM),1)
LDLIBS += $(ITM_LDLIBS)
endif
LIB := $(BUILD)/libstmbench.a

TEST_SRCS := $(wildcard tests/test_*.c)
ifneq ($(ITM),1)
TEST_SRCS := $(filter-out tests/test_itm.c,$(TEST_SRCS))
endif
TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))

# ---- make fuzz: the libFuzzer targets tests/fuzz/fuzz_<name>.c, each linked into
# BUILD/fuzz/fuzz_<name> against FUZZ_LIB, an archive of the library's own sources
# (COMMON_SRCS without the harness and the itm runtime, which needs gcc) compiled by
# FUZZ_CC with ASan, UBSan and libFuzzer's coverage. The linker takes from the archive
# what the targets use, so a source added to the library, or a target using more of
# it, needs no change here. Independent of MODE and SAN; its own flags stamp.
FUZZ_CC ?= clang
FUZZ_DIR := $(BUILD)/fuzz
FUZZ_FLAGS := $(FUZZ_DIR)/flags
FUZZ_SRCS := $(filter-out harness/% $(foreach rt,$(call rt_of,gnutm),runtime/$(rt)/%),$(sort $(COMMON_SRCS)))
FUZZ_OBJS := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(FUZZ_SRCS))
FUZZ_LIB := $(FUZZ_DIR)/libstmbench-fuzz.a
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(FUZZ_DIR)/%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CPPFLAGS := $(filter-out -DSYNC_PLAIN_MIMALLOC,$(CPPFLAGS))
# -Wno-unused-function: a target includes a workload's header for the few functions it
# drives; -O1: libFuzzer's advice, fast enough and with exact reports
FUZZ_CFLAGS := -std=gnu11 $(filter-out -Wno-clobbered,$(WARN)) -Wno-unused-function -g -O1 \
	$(FUZZ_SAN) -pthread -MMD -MP
FUZZ_LDLIBS := $(filter-out -lmimalloc $(ITM_LDLIBS),$(LDLIBS))
FUZZ_FLAGS_TEXT := FUZZ_CC=$(FUZZ_CC) CPPFLAGS=$(strip $(FUZZ_CPPFLAGS)) \
	CFLAGS=$(strip $(FUZZ_CFLAGS)) LDLIBS=$(strip $(FUZZ_LDLIBS))

# build/stmbench: a link to the default configuration's binary (see the header).
STMBENCH_LINK := $(if $(filter build/release,$(BUILD)),build/stmbench)

.PHONY: all test bench stress plots report pack scaling micro regress regress-history fuzz fuzz-build \
	interp-memory anchors memcheck mutants deps clean
all: $(BUILD)/stmbench $(TEST_BINS) $(STMBENCH_LINK)

# ---- the flags stamp: every object and binary depends on it (see the header)
FLAGS := $(BUILD)/flags
FLAGS_TEXT := CC=$(CC) CXX=$(CXX) ITM_CC=$(ITM_CC) ITM=$(ITM) RT_GNUTM=$(RT_GNUTM) \
	CPPFLAGS=$(strip $(CPPFLAGS)) CFLAGS=$(strip $(CFLAGS)) CXXFLAGS=$(strip $(CXXFLAGS)) \
	LDFLAGS=$(strip $(LDFLAGS)) LDLIBS=$(strip $(LDLIBS)) \
	$(foreach rt,$(RT_CC),RT_CFLAGS_$(rt)=$(RT_CFLAGS_$(rt)))
.PHONY: FORCE
$(FLAGS): STAMP_TEXT = $(FLAGS_TEXT)
# (also make fuzz's stamp, FUZZ_FLAGS below: each stamp's text is its STAMP_TEXT)
$(FLAGS) $(FUZZ_FLAGS): FORCE
	@mkdir -p $(dir $@)
	@printf '%s\n' '$(subst ','\'',$(STAMP_TEXT))' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv -f $@.tmp $@

define WL_RULE
$(BUILD)/obj/$(1)/%.o: %.c $(FLAGS)
	@mkdir -p $$(dir $$@)
	$$(if $$(V),,@echo "  CC[$(1)] $$<")
	$(Q)$$(CC) $$(CPPFLAGS) $(call rt_defs,$(1)) $$(CFLAGS) $$(RT_CFLAGS_$(1)) -c $$< -o $$@
endef
$(foreach rt,$(RT_CC) $(RT_VARIANT),$(eval $(call WL_RULE,$(rt))))

# The gnutm copies: ITM_CC with -fgnu-tm (gcc instruments the blocks' loads and
# stores). _ITM_beginTransaction returns twice (a restart jumps back to it), so
# -Wclobbered fires as under stm, and sync.h's rule for locals assigned in blocks
# covers it.
define GNUTM_RULE
$(BUILD)/obj/$(1)/%.o: %.c $(FLAGS)
	@mkdir -p $$(dir $$@)
	$$(if $$(V),,@echo "  CC[$(1)] $$<")
	$(Q)$$(ITM_CC) $$(CPPFLAGS) $(call rt_defs,$(1)) $$(CFLAGS) -fgnu-tm -Wno-clobbered -c $$< -o $$@
endef
$(foreach rt,$(RT_GNUTM),$(eval $(call GNUTM_RULE,$(rt))))

# The harness records the build's git revision and flags in its results. They go to
# $(BUILD)/buildinfo.h, rewritten only when they change, so a new commit recompiles
# the harness (and only it) and the recorded revision is never stale.
GIT_REV := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
BUILDINFO := $(BUILD)/buildinfo.h
BUILD_CONFIG := MODE=$(MODE) SAN=$(or $(SAN),none) CC=$(CC) $(if $(RT_GNUTM),itm copies: $(ITM_CC) -fgnu-tm,no itm)
$(BUILDINFO): FORCE
	@mkdir -p $(dir $@)
	@printf '#define STMBENCH_GIT_REV "%s"\n#define STMBENCH_CFLAGS "%s"\n#define STMBENCH_BUILD_CONFIG "%s"\n' \
		'$(GIT_REV)' '$(CC) $(strip $(CFLAGS))' '$(BUILD_CONFIG)' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv -f $@.tmp $@
HARNESS_OBJS := $(patsubst %.c,$(BUILD)/obj/common/%.o,$(wildcard harness/*.c))
$(HARNESS_OBJS): $(BUILDINFO)
$(HARNESS_OBJS): CPPFLAGS += -include $(BUILDINFO)

# The htm runtime's own files execute RTM instructions (_xbegin, _xend, _xabort): the
# only objects built with -mrtm. The workloads' htm copies call them out of line and
# contain none, so nothing built here runs an RTM instruction unless htm's init (or
# the context JSON's probe) found RTM in CPUID first.
$(BUILD)/obj/common/runtime/htm/%.o: CFLAGS += -mrtm

$(BUILD)/obj/common/%.o: %.c $(FLAGS)
	@mkdir -p $(dir $@)
	$(if $(V),,@echo "  CC $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(LIB): $(WL_OBJS) $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

# Whole archive: the harness's workload registry refers to the workload copies by weak
# symbols, which would not pull archive members in by themselves.
WHOLE_LIB = -Wl,--whole-archive $(LIB) -Wl,--no-whole-archive

# The STM's test hooks (runtime/stm/stm_internal.h) exist only with -DSTM_TEST_HOOKS:
# the tests link TEST_LIB, the library with the STM's files compiled so (BUILD/obj/stmtest/).
STM_OBJS := $(filter $(BUILD)/obj/common/runtime/stm/%,$(COMMON_OBJS))
STM_TEST_OBJS := $(patsubst $(BUILD)/obj/common/%,$(BUILD)/obj/stmtest/%,$(STM_OBJS))
TEST_LIB := $(BUILD)/libstmbench-test.a
TEST_WHOLE_LIB = -Wl,--whole-archive $(TEST_LIB) -Wl,--no-whole-archive
$(BUILD)/obj/stmtest/%.o: %.c $(FLAGS)
	@mkdir -p $(dir $@)
	$(if $(V),,@echo "  CC[test hooks] $<")
	$(Q)$(CC) $(CPPFLAGS) -DSTM_TEST_HOOKS $(CFLAGS) -c $< -o $@
$(TEST_LIB): $(WL_OBJS) $(filter-out $(STM_OBJS),$(COMMON_OBJS)) $(STM_TEST_OBJS)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/stmbench: $(BUILD)/obj/common/harness/main.o $(LIB) $(FLAGS)
	$(if $(V),,@echo "  LD $@")
	$(Q)$(CC) $(LDFLAGS) $< $(WHOLE_LIB) $(LDLIBS) -o $@

ifneq ($(STMBENCH_LINK),)
build/stmbench: build/release/stmbench FORCE
	$(Q)ln -sfn release/stmbench $@
endif

# Tests: each tests/test_<x>.c is one cmocka program. A test file that needs a
# runtime's barriers defines SYNC_RT <rt> itself before including runtime/sync.h.
$(BUILD)/tests/%: tests/%.c $(TEST_LIB) $(FLAGS)
	@mkdir -p $(dir $@)
	$(if $(V),,@echo "  TEST-CC $<")
	$(Q)$(CC) $(CPPFLAGS) -DSTM_TEST_HOOKS $(CFLAGS) $< $(TEST_WHOLE_LIB) $(LDFLAGS) $(LDLIBS) -lcmocka -o $@

# tests/test_itm.c has transactions of its own: compiled by ITM_CC with -fgnu-tm.
$(BUILD)/tests/test_itm: tests/test_itm.c $(TEST_LIB) $(FLAGS)
	@mkdir -p $(dir $@)
	$(if $(V),,@echo "  TEST-CC[itm] $<")
	$(Q)$(ITM_CC) $(CPPFLAGS) $(CFLAGS) -fgnu-tm -Wno-clobbered $< $(TEST_WHOLE_LIB) $(LDFLAGS) $(LDLIBS) -lcmocka -o $@

# make micro: harness/micro/shim.c compiled once per runtime that has a shim (build
# cc or gnutm: a variant runtime has no atomic blocks of its own), by that runtime's
# rule above, so the shim inlines its barriers as a workload copy does; the driver
# harness/micro/micro.cc finds them by weak symbols.
MICRO_SHIMS := $(foreach rt,$(RT_CC) $(RT_GNUTM),$(BUILD)/obj/$(rt)/harness/micro/shim.o)
$(BUILD)/obj/micro/micro.o: harness/micro/micro.cc $(FLAGS)
	@mkdir -p $(dir $@)
	$(if $(V),,@echo "  CXX $<")
	$(Q)$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c $< -o $@
$(BUILD)/micro/micro: $(BUILD)/obj/micro/micro.o $(MICRO_SHIMS) $(LIB) $(FLAGS)
	@mkdir -p $(dir $@)
	$(if $(V),,@echo "  LD $@")
	$(Q)$(CXX) $(LDFLAGS) $< $(MICRO_SHIMS) $(LIB) -lbenchmark $(LDLIBS) -o $@

deps:
	@scripts/deps.sh

# make test also runs the STM's protocol tests from a MODE=debug build, asserts on:
# DEBUG_BUILD, the debug configuration's own folder (or BUILD itself in MODE=debug).
DEBUG_BUILD := $(if $(filter debug,$(MODE)),$(BUILD),$(if $(BUILD_IS_DEFAULT),build/$(patsubst release%,debug%,$(CONFIG)),$(BUILD)/debug))
DEBUG_TESTS := $(DEBUG_BUILD)/tests/test_stm $(DEBUG_BUILD)/tests/test_stm_stress
test: all
ifneq ($(DEBUG_BUILD),$(BUILD))
	@$(MAKE) --no-print-directory MODE=debug BUILD=$(DEBUG_BUILD) $(DEBUG_TESTS)
endif
	@STM_DEBUG_BUILD=$(DEBUG_BUILD) scripts/run-tests.sh $(BUILD)

bench: all
	@BUILD=$(BUILD) scripts/bench.sh

# interp's memory stays bounded: 30 s runs at 2 threads, RSS at 5 s against the end
# (scripts/interp-rss.sh), into MEMCHECK_OUT (results/latest).
memcheck: all
	@BUILD=$(BUILD) scripts/interp-rss.sh $(or $(MEMCHECK_OUT),results/latest)

# The interpreter's memory modes alone (scripts/interp-memory.sh), into results/latest/.
interp-memory: all
	@BUILD=$(BUILD) scripts/interp-memory.sh $(or $(INTERP_OUT),results/latest)

# The model's gil rows against CPython and PyPy (scripts/anchors.sh, docs/anchors.md).
anchors: all
	@BUILD=$(BUILD) scripts/anchors.sh $(or $(ANCHORS_OUT),results/latest)

stress: all
	@scripts/stress.sh $(BUILD)

# PLOTS_DIR: the results folder to draw (default results/latest)
PLOTS_DIR ?= results/latest
plots:
	@scripts/plots.sh '$(PLOTS_DIR)'

# Several machines' results in one report; a results folder as a tarball to send back.
REPORT_OUT ?= results/report
report:
	@/usr/bin/python3 scripts/stmbench machines report --out $(REPORT_OUT) $(RESULTS)

pack:
	@/usr/bin/python3 scripts/stmbench machines pack $(or $(RESULTS),results/latest) $(PACK)

scaling: all
	@BUILD=$(BUILD) scripts/scaling.sh

micro: all $(BUILD)/micro/micro
	@scripts/micro.sh $(BUILD)

regress: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) scripts/regress-run.sh

# The same, and the verdict rows appended to REGRESS_HISTORY, by default
# results/history.csv (a trend over revisions: scripts/stmbench ab history-plot
# results/history.csv history.png).
REGRESS_HISTORY ?= results/history.csv
regress-history: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) REGRESS_HISTORY='$(REGRESS_HISTORY)' scripts/regress-run.sh

# make fuzz (see FUZZ_LIB above): every target built, then scripts/fuzz.sh runs them.
# (-mrtm for the htm runtime's own files, as in the library's rule above)
$(FUZZ_FLAGS): STAMP_TEXT = $(FUZZ_FLAGS_TEXT)
$(FUZZ_DIR)/obj/%.o: %.c $(FUZZ_FLAGS)
	@mkdir -p $(dir $@)
	$(if $(V),,@echo "  CC[fuzz] $<")
	$(Q)$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) $(if $(filter runtime/htm/%,$<),-mrtm) \
		-fsanitize=fuzzer-no-link -c $< -o $@
$(FUZZ_LIB): $(FUZZ_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^
$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB) $(FUZZ_FLAGS)
	$(if $(V),,@echo "  FUZZ-LD $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_LIB) $(FUZZ_LDLIBS) -o $@
fuzz-build: $(FUZZ_BINS)
fuzz: fuzz-build
	@scripts/fuzz.sh $(BUILD)

# make mutants: scripts/stmbench mutants removes or weakens one synchronisation point at a
# time, rebuilds that one workload copy with this configuration's own compile command
# and links it with the other objects here, so it gets the commands from here.
mutants: all
	@MUT_BUILD=$(BUILD) MUT_CC='$(CC)' MUT_ITM_CC='$(ITM_CC)' \
	 MUT_CPPFLAGS='$(strip $(CPPFLAGS))' MUT_CFLAGS='$(strip $(CFLAGS))' \
	 MUT_LDFLAGS='$(strip $(LDFLAGS))' MUT_LDLIBS='$(strip $(LDLIBS))' \
	 MUT_OBJS='$(WL_OBJS) $(COMMON_OBJS)' \
	 $(foreach rt,$(RT_CC),MUT_RT_CFLAGS_$(rt)='$(RT_CFLAGS_$(rt))') \
	 /usr/bin/python3 scripts/stmbench mutants

clean:
	rm -rf $(if $(BUILD_IS_DEFAULT),build,$(BUILD))

# (not the baseline revision's own build under $(BUILD)/regress: scripts/regress-run.sh)
-include $(shell find $(BUILD) -path $(BUILD)/regress -prune -o -name '*.d' -print 2>/dev/null)
