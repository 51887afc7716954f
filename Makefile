# svclust: PGXS build.  `make && make install`, then `make installcheck`
# against a running server; `make unit` runs the core's unit tests.
EXTENSION = svclust
EXTVERSION = 0.5.0
MODULE_big = svclust

# The core but its JSON text reader of options (options_text.c), which
# only the unit tests and the fuzzer call: they build it with the rest
# (test/unit/Makefile, test/fuzz/build.sh); the module walks a jsonb.
CORE_TEST_SRCS = src/core/options_text.c
CORE_SRCS = $(filter-out $(CORE_TEST_SRCS),$(sort $(wildcard src/core/*.c)))
GLUE_SRCS = $(sort $(wildcard src/*.c))
OBJS = $(CORE_SRCS:.c=.o) $(GLUE_SRCS:.c=.o)
# The headers of the core and the glue, which the objects depend on.  Not
# PGXS's HEADERS: that installs them into the server's include directory,
# and nothing builds against svclust's internals.
SVC_HEADERS = $(wildcard src/core/*.h src/*.h)

# the 0.1.0 script as released and the upgrade scripts from it: CREATE
# EXTENSION installs 0.1.0 and applies the upgrades
DATA = $(wildcard sql/$(EXTENSION)--*.sql)

# pg_regress tests: every sql/*.sql but the extension script.
REGRESS = $(patsubst sql/%.sql,%,$(filter-out sql/$(EXTENSION)--%,$(sort $(wildcard sql/*.sql))))
REGRESS_OPTS = --inputdir=. --load-extension=$(EXTENSION)

PG_CONFIG ?= pg_config
PG_CPPFLAGS += -Isrc/core
PG_CFLAGS += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare
# No fused multiply-adds outside the kernel loops: gcc fuses a * b + c on
# CPUs that have them (aarch64, or x86-64 with -march), which rounds
# differently.  Decoding a model cuts its stored tree again and compares
# the clusters, so a model must cut the same on every machine.
PG_CFLAGS += -ffp-contract=off
# The module is position-independent, where gcc by default never inlines a
# call to an exported function in its own file (it could be interposed):
# the state's accessors, called on every row, were calls.  Nothing here
# relies on interposition.
PG_CFLAGS += -fno-semantic-interposition

# Flags for the kernel loops only (doc/design-notes.md): -ffast-math lets
# gcc call glibc's vector exp, and -march=native its AVX2/AVX-512 versions
# (1.7x faster again).  Like pgvector, svclust builds for the host CPU on
# x86-64; `make OPTFLAGS=` gives a portable build (for packages, or a
# binary copied to other machines).
ifeq ($(shell uname -m), x86_64)
OPTFLAGS ?= -march=native
else
OPTFLAGS ?=
endif
KERNEL_CFLAGS = -O3 -ffast-math -ffp-contract=fast $(OPTFLAGS)
KERNEL_OBJS = src/core/kernel.o src/core/score.o src/core/score_trajectory.o
$(KERNEL_OBJS): CFLAGS += $(KERNEL_CFLAGS)
$(KERNEL_OBJS:.o=.bc): BITCODE_CFLAGS += $(KERNEL_CFLAGS)

# The training state's rows, sample and range (state.c, state_sample.c,
# state_stats.c),
# budget maintenance's selection (bsgd_select.c), the k-d tree's leaves
# (kdtree.c) and the incremental solver's column and inverse updates
# (incremental.c) and the scaling of every scored row (model_scale.c)
# vectorise at -O3 and the host CPU's width; elementwise,
# without -ffast-math or contraction, so their bytes are those of any build.
STATE_CFLAGS = -O3 $(OPTFLAGS)
STATE_OBJS = src/core/state.o src/core/state_sample.o src/core/state_stats.o \
	src/core/bsgd_select.o src/core/kdtree.o src/core/incremental.o src/core/model_scale.o \
	src/core/balltree.o
$(STATE_OBJS): CFLAGS += $(STATE_CFLAGS)
$(STATE_OBJS:.o=.bc): BITCODE_CFLAGS += $(STATE_CFLAGS)

EXTRA_CLEAN = test/unit/build test/tools/smo_cli test/tools/score_check test/tools/incr_bench test/tools/wide_core \
	test/tools/quality_cli

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The vector exp that -ffast-math has gcc call in the kernel loops is
# glibc's libmvec (x86-64; aarch64 with a recent glibc): linked where the
# compiler (PostgreSQL's, set by PGXS) finds it, and only there, since
# other C libraries have none (and their headers let gcc call none).
MVEC_LIB := $(if $(filter /%,$(shell $(CC) -print-file-name=libmvec.so)),-lmvec)
SHLIB_LINK += $(MVEC_LIB) -lm

$(OBJS): $(SVC_HEADERS)

# The exact solver alone as a command-line filter, from the extension's own
# objects (same flags), for test/crosscheck/smo_libsvm_test.py and the benchmark.
SMO_CLI_OBJS = src/core/smo.o src/core/aid.o src/core/kdtree.o src/core/kernel.o \
	src/core/svc_core.o
test/tools/smo_cli: test/tools/smo_cli.c $(SMO_CLI_OBJS) $(SVC_HEADERS)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ test/tools/smo_cli.c $(SMO_CLI_OBJS) $(MVEC_LIB) -lm

# The incremental solver against smo and in a sliding window, from the
# extension's own objects (same flags), for the benchmark's incremental section.
INCR_BENCH_OBJS = src/core/incremental.o src/core/smo.o src/core/kernel.o src/core/svc_core.o
test/tools/incr_bench: test/tools/incr_bench.c $(INCR_BENCH_OBJS) $(SVC_HEADERS)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ test/tools/incr_bench.c $(INCR_BENCH_OBJS) $(MVEC_LIB) -lm

# The scorer against the full sums and trajectories on CSV sets, from the
# extension's own objects (same flags), for the benchmark's scoring section.
SCORE_CHECK_OBJS = $(CORE_SRCS:.c=.o)
test/tools/score_check: test/tools/score_check.c $(SCORE_CHECK_OBJS) $(SVC_HEADERS)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ test/tools/score_check.c $(SCORE_CHECK_OBJS) $(MVEC_LIB) -lm

# The fit and the scorer on wide rows without a server, from the
# extension's own objects (same flags), for profiling (test/tools/wide_core.c).
# It reads options as JSON text (options_text.c, which the module leaves out).
test/tools/wide_core: test/tools/wide_core.c $(SCORE_CHECK_OBJS) $(CORE_TEST_SRCS) $(SVC_HEADERS)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ test/tools/wide_core.c $(SCORE_CHECK_OBJS) $(CORE_TEST_SRCS) $(MVEC_LIB) -lm

# A table fitted as svc_train fits it and scored as svc_assign scores it,
# without a server, for the quality benchmark's loop (test/bench/quality.py).
# Options come as JSON text: the core's text reader too (options_text.c).
test/tools/quality_cli: test/tools/quality_cli.c $(SCORE_CHECK_OBJS) $(CORE_TEST_SRCS) $(SVC_HEADERS) \
		test/unit/unit_state.h
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ test/tools/quality_cli.c $(SCORE_CHECK_OBJS) $(CORE_TEST_SRCS) $(MVEC_LIB) -lm

.PHONY: unit unit-valgrind
unit:
	$(MAKE) -C test/unit run

unit-valgrind:
	$(MAKE) -C test/unit valgrind
