/* label_lineage.c - cluster ids that survive a refresh (see label_lineage.h) */
#include "label_lineage.h"
#include "label_trajectory.h"

#include <stdlib.h>
#include <string.h>

int32_t
svc_lineage_next_id(const SvcModel *m)
{
	return m->cluster_id != NULL ? m->next_id : m->n_clusters + 1;
}

void
svc_lineage_free(const SvcEnv *env, SvcModel *m)
{
	svc_free(env, m->cluster_id);
	svc_free(env, m->links);
	m->cluster_id = NULL;
	m->links = NULL;
	m->next_id = m->n_links = 0;
}

/* Canonical order of the links: by cluster (0, the ended, first), kind, old id. */
static int
cmp_link(const void *a, const void *b)
{
	const SvcClusterLink *x = a,
			   *y = b;

	if (x->cluster != y->cluster)
		return x->cluster < y->cluster ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return (x->old_id > y->old_id) - (x->old_id < y->old_id);
}

SvcStatus
svc_lineage_match(const SvcEnv *env, SvcModel *m, const int32_t *old_id,
				  int32_t K_old, int32_t old_next, const int64_t *shared,
				  SvcError *err)
{
	int32_t		K = m->n_clusters;
	int32_t    *parent = NULL,
			   *id = NULL,
			   *heir = NULL;
	SvcClusterLink *links = NULL;
	int32_t		n_links = 0,
				next = old_next;
	SvcStatus	st = SVC_ERR_NOMEM;

	if (K < 1 || K_old < 1 || old_next < 1)
		return svc_fail(err, SVC_ERR_INTERNAL, "cluster ids of %d clusters from %d", K, K_old);
	parent = svc_alloc(env, sizeof(int32_t) * (size_t) K, err);
	id = svc_alloc(env, sizeof(int32_t) * (size_t) K, err);
	heir = svc_alloc(env, sizeof(int32_t) * (size_t) K_old, err);
	/* at most a parent per new cluster and one link per old one more */
	links = svc_alloc(env, sizeof(SvcClusterLink) * ((size_t) K + (size_t) K_old), err);
	if (!parent || !id || !heir || !links)
		goto done;

	/* each new cluster's parent: the old one it shares most with */
	for (int32_t j = 0; j < K; j++)
	{
		parent[j] = -1;
		id[j] = 0;
		for (int32_t i = 0; i < K_old; i++)
			if (shared[(size_t) i * K + j] > 0 &&
				(parent[j] < 0 || shared[(size_t) i * K + j] > shared[(size_t) parent[j] * K + j]))
				parent[j] = i;
	}
	/* each old cluster's heir: its child sharing most (ties: the larger) */
	for (int32_t i = 0; i < K_old; i++)
		heir[i] = -1;
	for (int32_t j = 0; j < K; j++)
	{
		int32_t		i = parent[j];

		if (i >= 0 && (heir[i] < 0 || shared[(size_t) i * K + j] > shared[(size_t) i * K + heir[i]]))
			heir[i] = j;
	}
	for (int32_t i = 0; i < K_old; i++)
	{
		if (heir[i] >= 0)
			id[heir[i]] = old_id[i];
		else
		{
			/* nobody's parent: merged into the cluster it shares most with */
			int32_t		best = -1;

			for (int32_t j = 0; j < K; j++)
				if (shared[(size_t) i * K + j] > 0 &&
					(best < 0 || shared[(size_t) i * K + j] > shared[(size_t) i * K + best]))
					best = j;
			links[n_links].cluster = best >= 0 ? best + 1 : 0;
			links[n_links].old_id = old_id[i];
			links[n_links].kind = best >= 0 ? SVC_LINK_MERGED : SVC_LINK_ENDED;
			links[n_links].shared = best >= 0 ? shared[(size_t) i * K + best] : 0;
			n_links++;
		}
	}
	for (int32_t j = 0; j < K; j++)
	{
		if (parent[j] >= 0)
		{
			links[n_links].cluster = j + 1;
			links[n_links].old_id = old_id[parent[j]];
			links[n_links].kind = SVC_LINK_PARENT;
			links[n_links].shared = shared[(size_t) parent[j] * K + j];
			n_links++;
		}
		if (id[j] == 0)
		{
			/* a new cluster, or a smaller part of a split: an unused id */
			if (next == INT32_MAX)
			{
				st = svc_fail(err, SVC_ERR_LIMIT, "the model's cluster ids would pass %d",
							  INT32_MAX - 1);
				svc_error_hint(err, "Train a new model with svc_train(features, options): its clusters are numbered from 1.");
				goto done;
			}
			id[j] = next++;
		}
	}
	qsort(links, (size_t) n_links, sizeof(SvcClusterLink), cmp_link);
	svc_lineage_free(env, m);
	m->cluster_id = id;
	m->next_id = next;
	m->links = links;
	m->n_links = n_links;
	id = NULL;
	links = NULL;
	st = SVC_OK;
done:
	svc_free(env, parent);
	svc_free(env, id);
	svc_free(env, heir);
	svc_free(env, links);
	return st;
}

/* The old model's ids: its own, or 1..K. */
static int32_t *
old_ids(const SvcEnv *env, const int32_t *ids, int32_t K_old, SvcError *err)
{
	int32_t    *out = svc_alloc(env, sizeof(int32_t) * (size_t) K_old, err);

	if (out != NULL)
		for (int32_t i = 0; i < K_old; i++)
			out[i] = ids ? ids[i] : i + 1;
	return out;
}

SvcStatus
svc_lineage_from_rows(const SvcEnv *env, SvcModel *m, const SvcModel *init,
					  const double *xs, const int32_t *labels, int64_t n,
					  SvcError *err)
{
	int32_t		K = m->n_clusters,
				K_old = init->n_clusters;
	int64_t    *shared;
	int32_t    *ids;
	SvcLabelWork w;
	int64_t		every = svc_label_units_per_check(init);
	SvcStatus	st;

	if (K_old < 1 || init->n_eq < 1)
		return svc_fail(err, SVC_ERR_INTERNAL, "an init model without clusters");
	shared = svc_alloc0(env, sizeof(int64_t) * (size_t) K_old * (size_t) K, err);
	ids = old_ids(env, init->cluster_id, K_old, err);
	if (!shared || !ids)
	{
		svc_free(env, shared);
		svc_free(env, ids);
		return SVC_ERR_NOMEM;
	}
	st = svc_label_work_init(env, init, &w, err);
	for (int64_t r = 0; st == SVC_OK && r < n; r++)
	{
		const double *x = xs + (size_t) r * init->dims;
		double		f = -1;
		int32_t		old;

		if (r % every == 0 && svc_interrupted(env, err))
		{
			st = SVC_ERR_INTERRUPTED;
			break;
		}
		old = svc_label_predict(init, x, &w, &f);
		/* only a row in init's domain stands for its clusters' rows */
		if (f >= 0 && old >= 1 && old <= K_old && labels[r] >= 1 && labels[r] <= K)
			shared[(size_t) (old - 1) * K + (labels[r] - 1)]++;
	}
	svc_label_work_free(env, &w);
	if (st == SVC_OK)
		st = svc_lineage_match(env, m, ids, K_old, svc_lineage_next_id(init), shared, err);
	svc_free(env, shared);
	svc_free(env, ids);
	return st;
}

SvcStatus
svc_lineage_from_recut(const SvcEnv *env, SvcModel *m, const int32_t *old_eq_cluster,
					   const int32_t *old_id, int32_t K_old, int32_t old_next,
					   SvcError *err)
{
	int32_t		K = m->n_clusters;
	int64_t    *shared = svc_alloc0(env, sizeof(int64_t) * (size_t) K_old * (size_t) K, err);
	int32_t    *ids = old_ids(env, old_id, K_old, err);
	SvcStatus	st;

	if (!shared || !ids)
	{
		svc_free(env, shared);
		svc_free(env, ids);
		return SVC_ERR_NOMEM;
	}
	/* an equilibrium's labelled rows are in both clusters it belongs to */
	for (int32_t e = 0; e < m->n_eq; e++)
	{
		int32_t		i = old_eq_cluster[e] - 1,
					j = m->eq_cluster[e] - 1;

		if (i >= 0 && i < K_old && j >= 0 && j < K)
			shared[(size_t) i * K + j] += m->eq_rows[e];
	}
	st = svc_lineage_match(env, m, ids, K_old, old_next, shared, err);
	svc_free(env, shared);
	svc_free(env, ids);
	return st;
}

/* Links by old id, then kind, then cluster: an old cluster's fate together. */
static int
cmp_link_old(const void *a, const void *b)
{
	const SvcClusterLink *x = a,
			   *y = b;

	if (x->old_id != y->old_id)
		return x->old_id < y->old_id ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return (x->cluster > y->cluster) - (x->cluster < y->cluster);
}

static int
cmp_int32(const void *a, const void *b)
{
	int32_t		x = *(const int32_t *) a,
				y = *(const int32_t *) b;

	return (x > y) - (x < y);
}

/*
 * Each cluster's parent link (-1: none) and whether some old cluster
 * merged into it, in one pass over the links (in canonical order).
 */
static void
index_links(const SvcModel *m, int32_t *parent, bool *merged)
{
	for (int32_t k = 0; k < m->n_clusters; k++)
	{
		parent[k] = -1;
		merged[k] = false;
	}
	for (int32_t l = 0; l < m->n_links; l++)
	{
		const SvcClusterLink *x = &m->links[l];

		if (x->cluster < 1 || x->cluster > m->n_clusters)
			continue;
		if (x->kind == SVC_LINK_PARENT)
			parent[x->cluster - 1] = l;
		else if (x->kind == SVC_LINK_MERGED)
			merged[x->cluster - 1] = true;
	}
}

const char *
svc_lineage_status_name(SvcLineageStatus s)
{
	switch (s)
	{
		case SVC_LINEAGE_CONTINUED:
			return "continued";
		case SVC_LINEAGE_SPLIT:
			return "split";
		case SVC_LINEAGE_MERGED:
			return "merged";
		case SVC_LINEAGE_NEW:
			return "new";
	}
	return "?";
}

SvcStatus
svc_lineage_statuses(const SvcEnv *env, const SvcModel *m, SvcLineageStatus *status,
					 SvcError *err)
{
	int32_t		K = m->n_clusters;
	int32_t    *parent = svc_alloc(env, sizeof(int32_t) * (size_t) K, err);
	bool	   *merged = svc_alloc(env, sizeof(bool) * (size_t) K, err);
	int32_t    *olds = svc_alloc(env, sizeof(int32_t) * ((size_t) m->n_links + 1), err);
	int32_t		n_olds = 0;

	if (!parent || !merged || !olds)
	{
		svc_free(env, parent);
		svc_free(env, merged);
		svc_free(env, olds);
		return SVC_ERR_NOMEM;
	}
	index_links(m, parent, merged);
	/* the old ids of parent links, sorted: a parent of two or more split */
	for (int32_t l = 0; l < m->n_links; l++)
		if (m->links[l].kind == SVC_LINK_PARENT)
			olds[n_olds++] = m->links[l].old_id;
	qsort(olds, (size_t) n_olds, sizeof(int32_t), cmp_int32);
	for (int32_t k = 0; k < K; k++)
	{
		if (parent[k] < 0)
			status[k] = SVC_LINEAGE_NEW;
		else if (merged[k])
			status[k] = SVC_LINEAGE_MERGED;
		else
		{
			int32_t		o = m->links[parent[k]].old_id;
			int32_t    *at = bsearch(&o, olds, (size_t) n_olds, sizeof(int32_t), cmp_int32);

			/* bsearch finds one of the equal ids: look at both neighbours */
			status[k] = (at != NULL &&
						 ((at > olds && at[-1] == o) || (at + 1 < olds + n_olds && at[1] == o))) ?
				SVC_LINEAGE_SPLIT : SVC_LINEAGE_CONTINUED;
		}
	}
	svc_free(env, parent);
	svc_free(env, merged);
	svc_free(env, olds);
	return SVC_OK;
}

SvcStatus
svc_lineage_check(const SvcEnv *env, const SvcModel *m, SvcError *err)
{
	int32_t		K = m->n_clusters;
	int32_t		n = m->n_links;
	int32_t    *ids = NULL,
			   *parent = NULL;
	bool	   *merged = NULL;
	int64_t    *total = NULL;
	SvcClusterLink *by_old = NULL;
	SvcStatus	st = SVC_ERR_NOMEM;

	if (m->cluster_id == NULL)
		return SVC_OK;
	if (m->next_id < 2 || n < 1)
		return svc_model_corrupt(err, "The cluster ids have no links.");
	ids = svc_alloc(env, sizeof(int32_t) * (size_t) K, err);
	parent = svc_alloc(env, sizeof(int32_t) * (size_t) K, err);
	merged = svc_alloc(env, sizeof(bool) * (size_t) K, err);
	total = svc_alloc0(env, sizeof(int64_t) * (size_t) K, err);
	by_old = svc_alloc(env, sizeof(SvcClusterLink) * (size_t) n, err);
	if (!ids || !parent || !merged || !total || !by_old)
		goto done;
	st = SVC_ERR_CORRUPT;

	/* ids: in range and distinct */
	for (int32_t k = 0; k < K; k++)
	{
		if (m->cluster_id[k] < 1 || m->cluster_id[k] >= m->next_id)
		{
			svc_model_corrupt(err, "A cluster id is out of range.");
			goto done;
		}
		ids[k] = m->cluster_id[k];
	}
	qsort(ids, (size_t) K, sizeof(int32_t), cmp_int32);
	for (int32_t k = 1; k < K; k++)
		if (ids[k] == ids[k - 1])
		{
			svc_model_corrupt(err, "Two clusters have the same id.");
			goto done;
		}

	/* links: in range, in canonical order, at most one parent a cluster */
	for (int32_t l = 0; l < n; l++)
	{
		const SvcClusterLink *x = &m->links[l];

		if (x->cluster < 0 || x->cluster > K || x->old_id < 1 || x->old_id >= m->next_id ||
			x->kind < SVC_LINK_PARENT || x->kind > SVC_LINK_ENDED ||
			(x->kind == SVC_LINK_ENDED) != (x->cluster == 0) ||
			(x->kind == SVC_LINK_ENDED ? x->shared != 0 : x->shared < 1))
		{
			svc_model_corrupt(err, "A cluster link is out of range.");
			goto done;
		}
		if (l > 0 && (cmp_link(&m->links[l - 1], x) >= 0 ||
					  (x->kind == SVC_LINK_PARENT && m->links[l - 1].cluster == x->cluster &&
					   m->links[l - 1].kind == SVC_LINK_PARENT)))
		{
			svc_model_corrupt(err, "The cluster links are not in order, or a cluster has two parents.");
			goto done;
		}
		if (x->cluster > 0)
		{
			total[x->cluster - 1] += x->shared;
			if (total[x->cluster - 1] > m->cluster_size[x->cluster - 1])
			{
				svc_model_corrupt(err, "A cluster shares more rows than it has.");
				goto done;
			}
		}
	}
	index_links(m, parent, merged);

	/*
	 * Each old id: a parent of one or more clusters, exactly one of which
	 * (sharing most; ties: the first) has its id; or merged into a cluster
	 * that has a parent; or ended.
	 */
	memcpy(by_old, m->links, sizeof(SvcClusterLink) * (size_t) n);
	qsort(by_old, (size_t) n, sizeof(SvcClusterLink), cmp_link_old);
	for (int32_t a = 0, b; a < n; a = b)
	{
		int32_t		heir = -1,
					parents = 0;

		for (b = a; b < n && by_old[b].old_id == by_old[a].old_id; b++)
			if (by_old[b].kind == SVC_LINK_PARENT)
			{
				parents++;
				if (heir < 0 || by_old[b].shared > by_old[heir].shared)
					heir = b;
			}
		if (b - a > 1 && parents != b - a)
		{
			svc_model_corrupt(err, "An old cluster has more than one fate.");
			goto done;
		}
		if (by_old[a].kind == SVC_LINK_MERGED && parent[by_old[a].cluster - 1] < 0)
		{
			svc_model_corrupt(err, "A cluster merged into one without a parent.");
			goto done;
		}
		for (int32_t l = a; l < b; l++)
			if (by_old[l].kind == SVC_LINK_PARENT &&
				(m->cluster_id[by_old[l].cluster - 1] == by_old[l].old_id) != (l == heir))
			{
				svc_model_corrupt(err, "A cluster's id is not its larger part's.");
				goto done;
			}
	}
	/* an id an old cluster had is only its heir's */
	for (int32_t k = 0; k < K; k++)
	{
		SvcClusterLink key;
		int32_t		lo = 0,
					hi = n;

		memset(&key, 0, sizeof(key));
		key.old_id = m->cluster_id[k];	/* kind 0: before any link of it */
		while (lo < hi)
		{
			int32_t		mid = lo + (hi - lo) / 2;

			if (cmp_link_old(&by_old[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && by_old[lo].old_id == key.old_id &&
			(parent[k] < 0 || m->links[parent[k]].old_id != key.old_id))
		{
			svc_model_corrupt(err, "A cluster has an old cluster's id that it did not continue.");
			goto done;
		}
	}
	st = SVC_OK;
done:
	svc_free(env, ids);
	svc_free(env, parent);
	svc_free(env, merged);
	svc_free(env, total);
	svc_free(env, by_old);
	return st;
}
