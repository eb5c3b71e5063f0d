# stmbench - Makefile
#
# Options (make VAR=value):
#   CC=clang|gcc        compiler (default clang; gcc builds it too)
#   MODE=release|debug  release: -O2 (default); debug: -O0 (DWARF 4 debug info in both:
#                       valgrind 3.19 cannot read the DWARF 5 that clang 14 emits)
#   SAN=address|undefined|thread   build with that sanitizer (tests only make sense
#                       with address/undefined; the STM's %gs tricks confuse thread)
#   BUILD=dir           output folder (default build/)
#   V=1                 show full compiler command lines
#   ITM_CC=gcc          compiler of the `itm` runtime's copies (GCC's libitm, -fgnu-tm)
#   ITM=0               leave the itm runtime out
#
# Targets:
#   make            build/stmbench, the libraries and the tests
#   make test       unit, protocol and stress tests (short); ends with "N passed, M failed"
#   make bench      the sweep into results/latest/ (BENCH_DURATION BENCH_REPEAT
#                   BENCH_THREADS BENCH_RUNTIMES BENCH_WORKLOADS)
#   make stress     long randomized + chaos stress of every runtime (minutes)
#   make plots      redraw figures from results/latest/*.csv
#   make micro      google-benchmark micro-benchmarks (C++ shim over the C runtime)
#   make regress    the current tree against the baseline revision (results/baseline's
#                   git_rev, built from history in $(BUILD)/regress/), interleaved A/B
#   make regress-history  the same, appending the verdict to results/history.csv
#   make fuzz       libFuzzer target for the interp assembler (clang only)
#   make deps       check (and as root install) the Debian packages needed
#   make clean
#
# Layout of the build: every workload in workloads/<w>.c is compiled once per runtime
# in RUNTIMES_GENERIC with -DSYNC_RT_<RT> (build/obj/<rt>/workloads/<w>.o), and its
# workloads/<w>_locks.c variant once with -DSYNC_RT_LOCKS. Everything else once.
#
# The itm runtime (GCC's libitm): whatever CC is, the workloads are compiled once more
# by ITM_CC with -fgnu-tm -DSYNC_RT_ITM (build/obj/itm/...; clang has no -fgnu-tm), and
# everything is linked with ITM_CC's libitm.so (rpath to its directory). At parse time
# the Makefile compiles and links a one-line transaction with ITM_CC; if that fails
# (no gcc, or no libitm: Debian's libitm1 and gcc's libitm.so link), or with ITM=0,
# or with any SAN (gcc 12 refuses -fgnu-tm with address and crashes in its TM pass
# with undefined and thread), the itm copies,
# runtime/itm/itm.c and tests/test_itm.c are left out and the rest builds as before:
# `stmbench --list` then has no itm (its descriptor and copies are weak symbols).

ifeq ($(origin CC),default)
CC := clang
endif
ifeq ($(origin CXX),default)
CXX := $(if $(findstring clang,$(CC)),clang++,g++)
endif
MODE ?= release
SAN ?=
BUILD ?= build
Q := $(if $(V),,@)

ifeq ($(MODE),release)
OPTFLAGS := -O2 -gdwarf-4
else ifeq ($(MODE),debug)
OPTFLAGS := -O0 -g3 -gdwarf-4
else
$(error MODE must be release or debug, not '$(MODE)')
endif
ifneq ($(SAN),)
ifeq ($(filter $(SAN),address undefined thread),)
$(error SAN must be address, undefined or thread, not '$(SAN)')
endif
SANFLAGS := -fsanitize=$(SAN) -fno-omit-frame-pointer
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
CFLAGS += -std=gnu11 $(WARN) $(OPTFLAGS) $(SANFLAGS) -pthread -MMD -MP
CXXFLAGS += -std=c++17 -Wall -Wextra -Werror $(OPTFLAGS) $(SANFLAGS) -pthread -MMD -MP
LDFLAGS += $(SANFLAGS) -pthread
LDLIBS += -lhwloc -lm

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

RUNTIMES_GENERIC := seq mutex gil stm
WL_SRCS := $(filter-out %_locks.c,$(wildcard workloads/*.c))
WL_LOCKS_SRCS := $(wildcard workloads/*_locks.c)
COMMON_SRCS := $(wildcard runtime/*.c runtime/*/*.c workloads/lib/*.c) \
               $(filter-out harness/main.c,$(wildcard harness/*.c))
ifneq ($(ITM),1)
COMMON_SRCS := $(filter-out runtime/itm/%,$(COMMON_SRCS))
endif

WL_OBJS := $(foreach rt,$(RUNTIMES_GENERIC),$(patsubst %.c,$(BUILD)/obj/$(rt)/%.o,$(WL_SRCS)))
ifeq ($(ITM),1)
WL_OBJS += $(patsubst %.c,$(BUILD)/obj/itm/%.o,$(WL_SRCS))
LDLIBS += $(ITM_LDLIBS)
endif
WL_LOCKS_OBJS := $(patsubst %.c,$(BUILD)/obj/locks/%.o,$(WL_LOCKS_SRCS))
COMMON_OBJS := $(patsubst %.c,$(BUILD)/obj/common/%.o,$(COMMON_SRCS))
LIB := $(BUILD)/libstmbench.a

TEST_SRCS := $(wildcard tests/test_*.c)
ifneq ($(ITM),1)
TEST_SRCS := $(filter-out tests/test_itm.c,$(TEST_SRCS))
endif
TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))

.PHONY: all test bench stress plots micro regress regress-history fuzz deps clean
all: $(BUILD)/stmbench $(TEST_BINS)

upper = $(shell echo $(1) | tr a-z A-Z)

define WL_RULE
$(BUILD)/obj/$(1)/%.o: %.c
	@mkdir -p $$(dir $$@)
	$$(if $$(V),,@echo "  CC[$(1)] $$<")
	$(Q)$$(CC) $$(CPPFLAGS) -DSYNC_RT_$(call upper,$(1)) $$(CFLAGS) -c $$< -o $$@
endef
$(foreach rt,$(RUNTIMES_GENERIC) locks,$(eval $(call WL_RULE,$(rt))))

# The itm copies: ITM_CC with -fgnu-tm (gcc instruments the blocks' loads and stores).
# _ITM_beginTransaction returns twice (a restart jumps back to it), so -Wclobbered
# fires as under stm, and sync.h's rule for locals assigned in blocks covers it.
$(BUILD)/obj/itm/%.o: %.c
	@mkdir -p $(dir $@)
	$(if $(V),,@echo "  CC[itm] $<")
	$(Q)$(ITM_CC) $(CPPFLAGS) -DSYNC_RT_ITM $(CFLAGS) -fgnu-tm -Wno-clobbered -c $< -o $@

# The harness records the build's git revision and flags in its results. They go to
# $(BUILD)/buildinfo.h, rewritten only when they change, so a new commit recompiles
# the harness (and only it) and the recorded revision is never stale.
GIT_REV := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
BUILDINFO := $(BUILD)/buildinfo.h
.PHONY: FORCE
$(BUILDINFO): FORCE
	@mkdir -p $(dir $@)
	@printf '#define STMBENCH_GIT_REV "%s"\n#define STMBENCH_CFLAGS "%s"\n' \
		'$(GIT_REV)' '$(CC) $(strip $(CFLAGS))' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv -f $@.tmp $@
HARNESS_OBJS := $(patsubst %.c,$(BUILD)/obj/common/%.o,$(wildcard harness/*.c))
$(HARNESS_OBJS): $(BUILDINFO)
$(HARNESS_OBJS): CPPFLAGS += -include $(BUILDINFO)

$(BUILD)/obj/common/%.o: %.c
	@mkdir -p $(dir $@)
	$(if $(V),,@echo "  CC $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(LIB): $(WL_OBJS) $(WL_LOCKS_OBJS) $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

# Whole archive: the harness's workload registry refers to the workload copies by weak
# symbols, which would not pull archive members in by themselves.
WHOLE_LIB = -Wl,--whole-archive $(LIB) -Wl,--no-whole-archive

$(BUILD)/stmbench: $(BUILD)/obj/common/harness/main.o $(LIB)
	$(if $(V),,@echo "  LD $@")
	$(Q)$(CC) $(LDFLAGS) $< $(WHOLE_LIB) $(LDLIBS) -o $@

# Tests: each tests/test_<x>.c is one cmocka program. A test file that needs a
# runtime's barriers defines SYNC_RT_<RT> itself before including runtime/sync.h.
$(BUILD)/tests/%: tests/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(if $(V),,@echo "  TEST-CC $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $< $(WHOLE_LIB) $(LDFLAGS) $(LDLIBS) -lcmocka -o $@

# tests/test_itm.c has transactions of its own: compiled by ITM_CC with -fgnu-tm.
$(BUILD)/tests/test_itm: tests/test_itm.c $(LIB)
	@mkdir -p $(dir $@)
	$(if $(V),,@echo "  TEST-CC[itm] $<")
	$(Q)$(ITM_CC) $(CPPFLAGS) $(CFLAGS) -fgnu-tm -Wno-clobbered $< $(WHOLE_LIB) $(LDFLAGS) $(LDLIBS) -lcmocka -o $@

deps:
	@scripts/deps.sh

test: deps
	@$(MAKE) --no-print-directory all
	@scripts/run-tests.sh $(BUILD)

bench: deps
	@$(MAKE) --no-print-directory all
	@scripts/bench.sh

stress: deps
	@$(MAKE) --no-print-directory all
	@scripts/stress.sh $(BUILD)

plots:
	@scripts/plots.sh results/latest

micro: deps
	@$(MAKE) --no-print-directory all
	@scripts/micro.sh $(BUILD)

regress: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) scripts/regress-run.sh

# The same, and the verdict rows appended to results/history.csv (a trend over revisions:
# scripts/regress-ab history-plot results/history.csv history.png).
regress-history: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) REGRESS_HISTORY=results/history.csv scripts/regress-run.sh

fuzz:
	@scripts/fuzz.sh $(BUILD)

clean:
	rm -rf $(BUILD)

# (not the baseline revision's own build under $(BUILD)/regress: scripts/regress-run.sh)
-include $(shell find $(BUILD) -path $(BUILD)/regress -prune -o -name '*.d' -print 2>/dev/null)
