/*
 * progress.c - the svclust.progress settings and the NOTICEs they ask for
 *
 * With svclust.progress on, long work reports counts (rows scanned, SGD
 * steps, SMO iterations, rows labelled or assigned) as NOTICEs each time a
 * count reaches a multiple of svclust.progress_every.  Counts, not times:
 * the same query prints the same lines, and a test can expect them.  Off
 * (the default), the core's hook is NULL and the glue tests one bool.
 */
#include "svclust.h"

#include <stdarg.h>

#include "utils/guc.h"

bool		svc_progress_on = false;
int			svc_progress_every = 100000;

void		_PG_init(void);

void
_PG_init(void)
{
	DefineCustomBoolVariable("svclust.progress",
							 "Reports the progress of svclust's long work as NOTICEs.",
							 "Rows scanned, SGD steps, SMO iterations and rows labelled, each time the count reaches a multiple of svclust.progress_every.",
							 &svc_progress_on,
							 false,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("svclust.progress_every",
							"How many rows, steps or iterations pass between two progress NOTICEs.",
							NULL,
							&svc_progress_every,
							100000,
							1, INT_MAX,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);
	MarkGUCPrefixReserved("svclust");
}

void
svc_progress_notice(const char *fname, const char *fmt,...)
{
	char		buf[256];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ereport(NOTICE,
			errmsg_internal("%s: %s", fname, buf));
}

static void
core_progress(void *ctx, SvcProgressStep step, int64_t done, int64_t bound)
{
	const char *fname = (const char *) ctx;

	switch (step)
	{
		case SVC_PROGRESS_SGD:
			svc_progress_notice(fname, "%lld SGD steps of at most %lld",
								(long long) done, (long long) bound);
			break;
		case SVC_PROGRESS_SMO:
			svc_progress_notice(fname, "%lld SMO iterations of at most %lld",
								(long long) done, (long long) bound);
			break;
		case SVC_PROGRESS_LABEL:
			svc_progress_notice(fname, "labelling with %lld rows", (long long) bound);
			break;
	}
}

void
svc_progress_env(SvcEnv *env, const char *fname)
{
	if (!svc_progress_on)
		return;
	/* the palloc environment's other hooks ignore ctx */
	env->ctx = (void *) fname;
	env->progress = core_progress;
	env->progress_every = svc_progress_every;
}

void
svc_progress_tick(const char *fname, const char *what, int64 done)
{
	if (svc_progress_on && done % svc_progress_every == 0)
		svc_progress_notice(fname, "%lld %s", (long long) done, what);
}
