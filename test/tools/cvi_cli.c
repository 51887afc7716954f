/*
 * cvi_cli.c - the validity indices of the core as a command-line filter
 *
 * Reads CSV rows from stdin and prints one "name value" line per index
 * (value "null" where undefined), for test/crosscheck/cvi_sklearn_test.py.
 *
 *   cvi_cli [--class] [--limit N] < rows.csv
 *
 * Each row is "cluster,x1,...,xd", or "cluster,class,x1,...,xd" with
 * --class.  An empty cluster field is a row without a cluster; an empty
 * class field a row without a class.  Built from src/core/cvi.c and
 * src/core/svc_core.c only.
 */
#include "cvi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growable array of any element type. */
typedef struct Vec
{
	void	   *data;
	size_t		len;
	size_t		cap;
	size_t		elem;
} Vec;

/* Append one element, exiting on allocation failure (a test tool). */
static void
vec_push(Vec *v, const void *item)
{
	if (v->len == v->cap)
	{
		v->cap = v->cap ? v->cap * 2 : 256;
		v->data = realloc(v->data, v->cap * v->elem);
		if (v->data == NULL)
		{
			fprintf(stderr, "cvi_cli: out of memory\n");
			exit(2);
		}
	}
	memcpy((char *) v->data + v->len * v->elem, item, v->elem);
	v->len++;
}

/* Parse an int32 field; false when it is empty. */
static bool
parse_id(const char *s, int32_t *out, long line)
{
	char	   *end;
	long		v;

	if (*s == '\0')
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < INT32_MIN || v > INT32_MAX)
	{
		fprintf(stderr, "cvi_cli: line %ld: bad id \"%s\"\n", line, s);
		exit(2);
	}
	*out = (int32_t) v;
	return true;
}

/* Split line at commas in place; returns the number of fields. */
static int
split(char *line, char **field, int max)
{
	int			n = 0;
	char	   *p = line;

	line[strcspn(line, "\r\n")] = '\0';
	while (n < max)
	{
		field[n++] = p;
		p = strchr(p, ',');
		if (p == NULL)
			break;
		*p++ = '\0';
	}
	return n;
}

/* Read the rows, compute, print. */
int
main(int argc, char **argv)
{
	bool		has_class = false;
	long long	limit = 0;
	Vec			x = {NULL, 0, 0, sizeof(double)};
	Vec			cl = {NULL, 0, 0, sizeof(int32_t)};
	Vec			lab_cl = {NULL, 0, 0, sizeof(int32_t)};
	Vec			lab_class = {NULL, 0, 0, sizeof(int32_t)};
	int64_t		unassigned = 0;
	int			dims = -1;
	static char buf[1 << 20];
	static char *field[SVC_MAX_DIMS + 2];
	long		line = 0;
	SvcCviInput in;
	SvcCviResult r;
	SvcError	err;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--class") == 0)
			has_class = true;
		else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc)
			limit = atoll(argv[++i]);
		else
		{
			fprintf(stderr, "usage: cvi_cli [--class] [--limit N] < rows.csv\n");
			return 2;
		}
	}
	while (fgets(buf, sizeof(buf), stdin) != NULL)
	{
		int			first = has_class ? 2 : 1;
		int			nf = split(buf, field, SVC_MAX_DIMS + 2);
		int32_t		c,
					k;
		bool		has_c,
					has_k = false;

		line++;
		if (nf == 1 && field[0][0] == '\0')
			continue;			/* a blank line */
		if (nf <= first || (dims >= 0 && nf - first != dims))
		{
			fprintf(stderr, "cvi_cli: line %ld: wrong number of fields\n", line);
			return 2;
		}
		dims = nf - first;
		has_c = parse_id(field[0], &c, line);
		if (has_class)
			has_k = parse_id(field[1], &k, line);
		if (!has_c)
		{
			unassigned++;
			continue;
		}
		vec_push(&cl, &c);
		for (int t = first; t < nf; t++)
		{
			double		v = strtod(field[t], NULL);

			vec_push(&x, &v);
		}
		if (has_k)
		{
			vec_push(&lab_cl, &c);
			vec_push(&lab_class, &k);
		}
	}

	memset(&in, 0, sizeof(in));
	in.n = (int64_t) cl.len;
	in.dims = dims < 0 ? 0 : dims;
	in.x = x.data;
	in.cluster = cl.data;
	in.n_unassigned = unassigned;
	in.has_class = has_class;
	in.n_labelled = (int64_t) lab_cl.len;
	in.lab_cluster = lab_cl.data;
	in.lab_class = lab_class.data;
	in.limit = limit;
	if (svc_cvi_compute(&svc_env_malloc, &in, &r, &err) != SVC_OK)
	{
		fprintf(stderr, "cvi_cli: %s\n", err.message);
		return 1;
	}
	for (int i = 0; i < svc_cvi_count(has_class); i++)
	{
		if (r.defined[i])
			printf("%s %.17g\n", svc_cvi_name((SvcCviIndex) i), r.value[i]);
		else
			printf("%s null\n", svc_cvi_name((SvcCviIndex) i));
	}
	free(x.data);
	free(cl.data);
	free(lab_cl.data);
	free(lab_class.data);
	return 0;
}
