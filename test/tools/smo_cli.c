/*
 * smo_cli.c - the core's exact SVDD solver (smo.c) as a command-line filter
 *
 * For test/crosscheck/smo_libsvm_test.py and test/bench/smo_vs_sklearn.py, which
 * compare it with libsvm's one-class SVM (scikit-learn's OneClassSVM).
 *
 *   smo_cli --gamma G --nu NU [--eps E] [--cache-mb M] [--no-shrinking]
 *           [--max-iter N] [--header] [--alpha] [--no-f]
 *           [--solver smo|aid] [--aid-gap G] [--aid-init kmeans|grid]
 *           [--aid-clusters K] [--seed S] [FILE]
 *
 * Reads rows of numbers from FILE (default stdin), fields separated by
 * commas and/or white space; blank lines and lines starting with '#' are
 * skipped, and --header skips the first line.  Every row must have the
 * same number of fields.  The rows are used as given (no scaling).
 *
 * The parameters are libsvm's, converted here (smo.h): the bound is
 * C = 1 / (nu n), and --eps (default 1e-3, libsvm's -e) is the stopping
 * gap on libsvm's gradient K a, with a = nu n alpha.  The solver's gap is
 * on G = 2 K alpha - 1, which is 2 / (nu n) times libsvm's, so the solver
 * gets eps = 2 E / (nu n).
 *
 * Prints "name value" lines (doubles as %.17g): n, d, gamma, nu, c,
 * eps_libsvm, eps (the solver's), objective (F(alpha) of smo.h),
 * objective_libsvm (1/2 a' K a of the same solution, (F + sum alpha)
 * (nu n)^2 / 2), offset, rho (offset nu n, libsvm's rho), r2, gap,
 * iterations, converged (0/1), n_free, n_bound, n_sv, cache_hits,
 * cache_misses, train_seconds (wall clock of svc_smo_solve alone),
 * cpu_seconds (the process's CPU time in it: steadier on a busy machine), then
 * unless --no-f one line "f VALUE" per row in input order,
 * f = sum_j alpha_j K(x_j, x) - offset (positive inside the sphere; times
 * nu n it is libsvm's decision value), and with --alpha one line
 * "alpha VALUE" per row.
 *
 * With --solver aid the same dual is solved by aid.c (aggregation and
 * iterative disaggregation, stopping at the relative gap --aid-gap,
 * default 1e-4); it prints the same lines (cache counts and iterations
 * summed over its solves) and also lower (its lower bound on objective),
 * aid_gap, rounds, final_clusters, share_aggregated, all_passed,
 * sums_computed (clusters whose kernel sums over every row it computed,
 * each |G| n kernel values, recomputations after eviction included), and one
 * line "round R aggregates upper lower gap smo_iterations failed" per
 * round before them.
 *
 * Built from src/core/smo.c, aid.c, kdtree.c, kernel.c and svc_core.c
 * only, with the extension's compiler flags (`make test/tools/smo_cli`).
 */
#include "aid.h"
#include "kernel.h"
#include "smo.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *usage =
"usage: smo_cli --gamma G --nu NU [--eps E] [--cache-mb M] [--no-shrinking]\n"
"               [--max-iter N] [--header] [--alpha] [--no-f]\n"
"               [--solver smo|aid] [--aid-gap G] [--aid-init kmeans|grid]\n"
"               [--aid-clusters K] [--seed S] [FILE]\n";

/* One line per AID round, as it ends. */
static void
print_round(void *ctx, const SvcAidRound *r)
{
	(void) ctx;
	printf("round %d %lld %.17g %.17g %.17g %lld %lld\n", (int) r->round,
		   (long long) r->aggregates, r->upper, r->lower, r->gap,
		   (long long) r->smo_iterations, (long long) r->failed);
}

static void
die(const char *msg, long line)
{
	if (line > 0)
		fprintf(stderr, "smo_cli: line %ld: %s\n", line, msg);
	else
		fprintf(stderr, "smo_cli: %s\n", msg);
	exit(2);
}

/* Parse a finite double option value, or exit. */
static double
num_arg(const char *s)
{
	char	   *end;
	double		v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(v))
		die("bad number in the arguments", 0);
	return v;
}

/* Append the numbers of one line to *x (growing it); returns their count. */
static int
parse_line(char *p, double **x, size_t *len, size_t *cap, long line)
{
	int			nf = 0;

	for (;;)
	{
		char	   *end;
		double		v;

		while (*p == ',' || *p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (*p == '\0')
			break;
		errno = 0;
		v = strtod(p, &end);
		if (end == p || errno == ERANGE)
			die("not a number", line);
		if (*end != '\0' && strchr(", \t\r\n", *end) == NULL)
			die("not a number", line);
		if (*len == *cap)
		{
			*cap = *cap ? *cap * 2 : 4096;
			*x = realloc(*x, *cap * sizeof(double));
			if (*x == NULL)
				die("out of memory", 0);
		}
		(*x)[(*len)++] = v;
		nf++;
		p = end;
	}
	return nf;
}

int
main(int argc, char **argv)
{
	double		gamma = 0.0,
				nu = 0.0,
				eps_lib = 1e-3,
				cache_mb = 100.0;
	bool		use_aid = false,
				shrinking = true,
				header = false,
				print_alpha = false,
				print_f = true;
	int64_t		max_iter = 0,
				aid_clusters = 0;
	double		aid_gap = 1e-4;
	uint64_t	seed = 0;
	SvcAidInit	aid_init = SVC_AID_INIT_GRID;	/* aid.h's default */
	SvcAidParams ap;
	SvcAidResult ar;
	const char *path = NULL;
	FILE	   *in = stdin;
	static char buf[1 << 20];
	double	   *x = NULL,
			   *sv = NULL,
			   *sv_alpha = NULL;
	size_t		len = 0,
				cap = 0;
	int			d = -1;
	long		line = 0;
	int64_t		n,
				n_sv = 0;
	double		nul,
				asum = 0.0;
	SvcSmoParams p;
	SvcSmoResult r;
	SvcError	err;
	struct timespec t0,
				t1,
				c0,
				c1;

	for (int i = 1; i < argc; i++)
	{
		const char *a = argv[i];
		bool		more = i + 1 < argc;

		if (strcmp(a, "--gamma") == 0 && more)
			gamma = num_arg(argv[++i]);
		else if (strcmp(a, "--nu") == 0 && more)
			nu = num_arg(argv[++i]);
		else if (strcmp(a, "--eps") == 0 && more)
			eps_lib = num_arg(argv[++i]);
		else if (strcmp(a, "--cache-mb") == 0 && more)
			cache_mb = num_arg(argv[++i]);
		else if (strcmp(a, "--max-iter") == 0 && more)
			max_iter = (int64_t) num_arg(argv[++i]);
		else if (strcmp(a, "--solver") == 0 && more)
		{
			const char *v = argv[++i];

			if (strcmp(v, "aid") == 0)
				use_aid = true;
			else if (strcmp(v, "smo") != 0)
				die("--solver is smo or aid", 0);
		}
		else if (strcmp(a, "--aid-gap") == 0 && more)
			aid_gap = num_arg(argv[++i]);
		else if (strcmp(a, "--aid-clusters") == 0 && more)
			aid_clusters = (int64_t) num_arg(argv[++i]);
		else if (strcmp(a, "--seed") == 0 && more)
			seed = (uint64_t) num_arg(argv[++i]);
		else if (strcmp(a, "--aid-init") == 0 && more)
		{
			const char *v = argv[++i];

			if (strcmp(v, "grid") == 0)
				aid_init = SVC_AID_INIT_GRID;
			else if (strcmp(v, "kmeans") == 0)
				aid_init = SVC_AID_INIT_KMEANS;
			else
				die("--aid-init is kmeans or grid", 0);
		}
		else if (strcmp(a, "--no-shrinking") == 0)
			shrinking = false;
		else if (strcmp(a, "--header") == 0)
			header = true;
		else if (strcmp(a, "--alpha") == 0)
			print_alpha = true;
		else if (strcmp(a, "--no-f") == 0)
			print_f = false;
		else if (a[0] != '-' && path == NULL)
			path = a;
		else
		{
			fputs(usage, stderr);
			return 2;
		}
	}
	if (!(gamma > 0) || !(nu > 0 && nu <= 1) || !(eps_lib > 0) || !(cache_mb >= 0))
	{
		fputs("smo_cli: need gamma > 0, 0 < nu <= 1, eps > 0, cache-mb >= 0\n", stderr);
		fputs(usage, stderr);
		return 2;
	}
	if (path != NULL && (in = fopen(path, "r")) == NULL)
	{
		perror(path);
		return 2;
	}
	while (fgets(buf, sizeof(buf), in) != NULL)
	{
		int			nf;

		line++;
		if (strchr(buf, '\n') == NULL && !feof(in))
			die("line too long", line);
		if ((line == 1 && header) || buf[0] == '#')
			continue;
		nf = parse_line(buf, &x, &len, &cap, line);
		if (nf == 0)
			continue;
		if (d >= 0 && nf != d)
			die("wrong number of fields", line);
		d = nf;
	}
	if (in != stdin)
		fclose(in);
	if (d < 0)
		die("no rows", 0);
	n = (int64_t) (len / (size_t) d);
	nul = nu * (double) n;

	svc_smo_params_default(&p);
	p.gamma = gamma;
	p.c_all = 1.0 / nul;
	p.eps = 2.0 * eps_lib / nul;
	p.max_iter = max_iter;
	p.cache_bytes = (size_t) (cache_mb * 1024.0 * 1024.0);
	p.shrinking = shrinking;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&ar, 0, sizeof(ar));
	if (use_aid)
	{
		svc_aid_params_default(&ap);
		ap.gamma = gamma;
		ap.c = p.c_all;
		ap.eps = p.eps;
		ap.gap = aid_gap;
		ap.max_iter = max_iter;
		ap.cache_bytes = p.cache_bytes;
		ap.init = aid_init;
		ap.init_clusters = aid_clusters;
		ap.seed = seed;
		ap.observe = print_round;
		if (svc_aid_solve(&svc_env_malloc, x, n, d, &ap, &ar, &err) != SVC_OK)
		{
			fprintf(stderr, "smo_cli: %s\n", err.message);
			return 1;
		}
		/* the fields smo's lines print */
		memset(&r, 0, sizeof(r));
		r.alpha = ar.alpha;
		r.offset = ar.offset;
		r.r2 = ar.r2;
		r.objective = ar.objective;
		r.gap = ar.smo_gap;
		r.iterations = ar.smo_iterations;
		r.converged = ar.converged;
		r.n_free = ar.n_free;
		r.n_bound = ar.n_bound;
		r.cache_hits = ar.cache_hits;
		r.cache_misses = ar.cache_misses;
	}
	else if (svc_smo_solve(&svc_env_malloc, x, n, d, &p, &r, &err) != SVC_OK)
	{
		fprintf(stderr, "smo_cli: %s\n", err.message);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);

	/* the support vectors, contiguous, for svc_kernel_sum */
	sv = malloc(sizeof(double) * (size_t) n * (size_t) d);
	sv_alpha = malloc(sizeof(double) * (size_t) n);
	if (sv == NULL || sv_alpha == NULL)
		die("out of memory", 0);
	for (int64_t t = 0; t < n; t++)
	{
		asum += r.alpha[t];
		if (r.alpha[t] > 0)
		{
			memcpy(sv + (size_t) n_sv * (size_t) d, x + (size_t) t * (size_t) d,
				   sizeof(double) * (size_t) d);
			sv_alpha[n_sv++] = r.alpha[t];
		}
	}
	if (n_sv > INT32_MAX)
		die("too many support vectors", 0);

	printf("n %lld\n", (long long) n);
	printf("d %d\n", d);
	printf("gamma %.17g\n", gamma);
	printf("nu %.17g\n", nu);
	printf("c %.17g\n", p.c_all);
	printf("eps_libsvm %.17g\n", eps_lib);
	printf("eps %.17g\n", p.eps);
	printf("objective %.17g\n", r.objective);
	printf("objective_libsvm %.17g\n", (r.objective + asum) * nul * nul / 2.0);
	printf("offset %.17g\n", r.offset);
	printf("rho %.17g\n", r.offset * nul);
	printf("r2 %.17g\n", r.r2);
	printf("gap %.17g\n", r.gap);
	printf("iterations %lld\n", (long long) r.iterations);
	printf("converged %d\n", r.converged ? 1 : 0);
	printf("n_free %lld\n", (long long) r.n_free);
	printf("n_bound %lld\n", (long long) r.n_bound);
	printf("n_sv %lld\n", (long long) n_sv);
	printf("cache_hits %lld\n", (long long) r.cache_hits);
	printf("cache_misses %lld\n", (long long) r.cache_misses);
	printf("train_seconds %.6f\n",
		   (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) * 1e-9);
	printf("cpu_seconds %.6f\n",
		   (double) (c1.tv_sec - c0.tv_sec) + (double) (c1.tv_nsec - c0.tv_nsec) * 1e-9);
	if (use_aid)
	{
		printf("lower %.17g\n", ar.lower);
		printf("aid_gap %.17g\n", ar.gap);
		printf("rounds %d\n", (int) ar.rounds);
		printf("final_clusters %lld\n", (long long) ar.final_clusters);
		printf("share_aggregated %.17g\n", ar.share_aggregated);
		printf("all_passed %d\n", ar.all_passed ? 1 : 0);
		printf("sums_computed %lld\n", (long long) ar.sums_computed);
	}
	if (print_f)
		for (int64_t t = 0; t < n; t++)
			printf("f %.17g\n",
				   svc_kernel_sum(sv, sv_alpha, NULL, (int32_t) n_sv, d, gamma,
								  x + (size_t) t * (size_t) d) - r.offset);
	if (print_alpha)
		for (int64_t t = 0; t < n; t++)
			printf("alpha %.17g\n", r.alpha[t]);
	if (use_aid)
		svc_aid_result_free(&svc_env_malloc, &ar);
	else
		svc_smo_result_free(&svc_env_malloc, &r);
	free(x);
	free(sv);
	free(sv_alpha);
	return 0;
}
